package component_test

import (
	"context"
	"fmt"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/aggregate"
	"github.com/factum-go/factum/command"
	"github.com/factum-go/factum/component"
	"github.com/factum-go/factum/engine"
	"github.com/factum-go/factum/memory"
	"github.com/factum-go/factum/snapshotter"
)

type Lamp struct{ On bool }
type Switch struct{ On bool }
type Switched struct{ On bool }

var lamps = aggregate.New[Lamp]("home", "lamp",
	aggregate.Source(func(l *Lamp, e Switched) { l.On = e.On }),
	aggregate.Handle(func(_ context.Context, _ Lamp, c Switch) ([]any, error) { return []any{Switched(c)}, nil }, aggregate.AllowCreate()))

// announced is a component of its own: the engine's snapshotter, saying
// at Setup which types it serves.
type announced struct {
	component.Component[component.Host]
}

func (a announced) Setup(env component.Env) (component.Parts, error) {
	for _, t := range env.Types {
		fmt.Println("snapshots of", t.Named())
	}
	return a.Component.Setup(env)
}

// A component that does not import the engine sees it as a Host; here one
// replaces the engine's snapshotter.
func Example() {
	ctx := context.Background()
	sn := announced{snapshotter.NewComponent(snapshotter.ComponentConfig{})}
	eng, err := engine.New(engine.Config{Storage: memory.New(), Snapshotter: sn}, lamps)
	if err != nil {
		fmt.Println(err)
		return
	}
	_ = eng.Start(ctx)
	defer eng.Shutdown(ctx)
	res, _ := eng.Gateway().SendAndWait(ctx, factum.NewCommand(lamps.ID("hall"), Switch{On: true}), command.Wait(factum.StageSnapshot))
	fmt.Println(res.Stage)
	// Output:
	// snapshots of home.lamp
	// SNAPSHOT
}
