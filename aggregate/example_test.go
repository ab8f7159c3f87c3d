package aggregate_test

import (
	"context"
	"fmt"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/aggregate"
)

type Light struct{ On bool }
type Switch struct{ On bool }
type Switched struct{ On bool }

// Defining an aggregate and deciding a command against a state.
func Example() {
	lights := aggregate.New[Light]("home", "light",
		aggregate.Source(func(l *Light, e Switched) { l.On = e.On }),
		aggregate.Handle(func(_ context.Context, l Light, c Switch) ([]any, error) {
			if l.On == c.On {
				return nil, factum.IllegalState("already so")
			}
			return []any{Switched(c)}, nil
		}, aggregate.AllowCreate()),
	)
	st := aggregate.State[Light]{ID: lights.ID("hall")}
	cmd := factum.NewCommand(lights.ID("hall"), Switch{On: true})
	cmd.AllowCreate = true
	events, err := lights.Decide(context.Background(), &st, &cmd)
	fmt.Println(events, err)
	_ = lights.Apply(&st, 1, []string{"switched"}, events)
	_, err = lights.Decide(context.Background(), &st, &cmd)
	fmt.Println(st.Value.On, st.Version, factum.CodeOf(err))
	// Output:
	// [{true}] <nil>
	// true 1 IllegalState
}
