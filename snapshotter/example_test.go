package snapshotter_test

import (
	"context"
	"fmt"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/aggregate"
	"github.com/factum-go/factum/command"
	"github.com/factum-go/factum/engine"
	"github.com/factum-go/factum/memory"
	"github.com/factum-go/factum/snapshotter"
)

type Meter struct{ Reading int }
type Read struct{ Value int }
type ReadingTaken struct{ Value int }

var Meters = aggregate.New[Meter]("grid", "meter",
	aggregate.Source(func(m *Meter, e ReadingTaken) { m.Reading = e.Value }),
	aggregate.Handle(func(_ context.Context, _ Meter, c Read) ([]any, error) { return []any{ReadingTaken(c)}, nil }, aggregate.AllowCreate()))

// A wait for SNAPSHOT returns once the snapshotter saved the state.
func Example() {
	ctx := context.Background()
	eng, _ := engine.New(engine.Config{Storage: memory.New()}, Meters)
	_ = eng.Start(ctx)
	defer eng.Shutdown(ctx)

	res, _ := eng.Gateway().SendAndWait(ctx, factum.NewCommand(Meters.ID("m1"), Read{Value: 42}), command.Wait(factum.StageSnapshot))
	fmt.Println(res.Stage, res.Function.Processor == snapshotter.Processor)
	snap, _ := eng.Snapshots().Load(ctx, Meters.ID("m1"))
	fmt.Println(snap.Version, string(snap.State))
	// Output:
	// SNAPSHOT true
	// 1 {"Reading":42}
}
