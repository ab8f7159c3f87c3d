package engine_test

import (
	"context"
	"fmt"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/aggregate"
	"github.com/factum-go/factum/command"
	"github.com/factum-go/factum/engine"
	"github.com/factum-go/factum/eventstore"
)

type Note struct{ Text string }
type Write struct{ Text string }
type Written struct{ Text string }

func Example() {
	ctx := context.Background()
	notes := aggregate.New[Note]("docs", "note",
		aggregate.Source(func(n *Note, e Written) { n.Text = e.Text }),
		aggregate.Handle(func(_ context.Context, _ Note, c Write) ([]any, error) {
			return []any{Written(c)}, nil
		}, aggregate.AllowCreate()),
	)
	rt, err := engine.New(engine.Config{Store: eventstore.NewMemory()}, notes)
	if err != nil {
		panic(err)
	}
	if err := rt.Start(ctx); err != nil {
		panic(err)
	}
	res, err := rt.Gateway().SendAndWait(ctx,
		factum.NewCommand(notes.ID("n1"), Write{Text: "hello"}),
		command.Wait(factum.StageSnapshot)) // nobody consumes: completes after PROCESSED
	fmt.Println(res.Stage, res.AggregateVersion, err)
	fmt.Println(res.Note)
	fmt.Println(rt.Shutdown(ctx))
	// Output:
	// SNAPSHOT 1 <nil>
	// no function consumes written at SNAPSHOT; completed after PROCESSED
	// <nil>
}
