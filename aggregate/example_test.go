package aggregate_test

import (
	"context"
	"fmt"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/aggregate"
	"github.com/factum-go/factum/codec"
	"github.com/factum-go/factum/eventstore"
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

// A middleware around the commands of one aggregate type: it sees each
// command once, with its final signal.
func ExampleWithMiddleware() {
	logged := func(named factum.NamedAggregate, next aggregate.CommandFunc) aggregate.CommandFunc {
		return func(ctx context.Context, cmd *factum.Command) factum.Signal {
			sig := next(ctx, cmd)
			fmt.Println(named, cmd.Name, sig.Code, sig.AggregateVersion)
			return sig
		}
	}
	lamps := aggregate.New[Light]("home", "lamp",
		aggregate.Source(func(l *Light, e Switched) { l.On = e.On }),
		aggregate.Handle(func(_ context.Context, _ Light, c Switch) ([]any, error) {
			return []any{Switched(c)}, nil
		}, aggregate.AllowCreate()),
		aggregate.WithMiddleware[Light](logged),
	)
	p, _ := lamps.NewExecutor(aggregate.ExecutorConfig{Store: eventstore.NewMemory(), Codec: codec.NewRegistry()})
	cmd := factum.NewCommand(lamps.ID("desk").WithTenant(factum.DefaultTenant), Switch{On: true})
	cmd.AllowCreate = true
	p.Process(context.Background(), &cmd)
	// Output:
	// home.lamp switch Ok 1
}
