package memory_test

import (
	"context"
	"fmt"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/aggregate"
	"github.com/factum-go/factum/command"
	"github.com/factum-go/factum/engine"
	"github.com/factum-go/factum/memory"
)

type Light struct{ On bool }
type Switch struct{ On bool }
type Switched struct{ On bool }

var Lights = aggregate.New[Light]("home", "light",
	aggregate.Source(func(l *Light, e Switched) { l.On = e.On }),
	aggregate.Handle(func(_ context.Context, _ Light, c Switch) ([]any, error) { return []any{Switched(c)}, nil }, aggregate.AllowCreate()))

func Example() {
	ctx := context.Background()
	db := memory.New()
	defer db.Close()
	eng, _ := engine.New(engine.Config{Storage: db}, Lights)
	_ = eng.Start(ctx)
	defer eng.Shutdown(ctx)

	res, err := eng.Gateway().SendAndWait(ctx, factum.NewCommand(Lights.ID("hall"), Switch{On: true}), command.Wait(factum.StageSnapshot))
	fmt.Println(res.AggregateVersion, err)
	snaps, _ := db.SnapshotStore(ctx, "home")
	snap, _ := snaps.Load(ctx, Lights.ID("hall"))
	fmt.Println(string(snap.State))
	// Output:
	// 1 <nil>
	// {"On":true}
}
