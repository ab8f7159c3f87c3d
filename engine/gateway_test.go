package engine_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/aggregate"
	"github.com/factum-go/factum/command"
	"github.com/factum-go/factum/engine"
)

// A branch stage with no consuming function completes right after a
// successful PROCESSED, with a note.
func TestBranchWithoutConsumers(t *testing.T) {
	rt, def := newRuntime(t, engine.Config{}, nil)
	r, err := rt.Gateway().SendAndWait(context.Background(), factum.NewCommand(def.ID("b"), Add{N: 1}), command.Wait(factum.StageSnapshot))
	if err != nil || r.Stage != factum.StageSnapshot || r.Note == "" || r.AggregateVersion != 1 {
		t.Fatalf("%+v %v", r, err)
	}
}

// With consumers the wait needs every matching function's signal; the
// stream yields SENT, PROCESSED, then each signal, held back until
// PROCESSED when one comes early.
func TestBranchWithConsumersAndStream(t *testing.T) {
	f1 := factum.Function{Context: "test", Processor: "proj", Name: "one"}
	f2 := factum.Function{Context: "test", Processor: "proj", Name: "two"}
	rt, def, g := branchRuntime(t, f1, f2)
	gw := rt.Gateway()
	cmd := factum.NewCommand(def.ID("s"), Block{})
	var got []command.Result
	done := make(chan struct{})
	go func() {
		defer close(done)
		for r, err := range gw.SendAndWaitStream(context.Background(), cmd, command.Wait(factum.StageProjected)) {
			if (err == nil) != r.Succeeded() {
				t.Errorf("element error %v does not match Succeeded for %+v", err, r)
			}
			got = append(got, r)
		}
	}()
	<-g.entered
	// f1 signals before PROCESSED (it cannot in practice, but a networked
	// sink may reorder): it is held back.
	rt.Signals().Signal(factum.Signal{CommandID: cmd.ID, Stage: factum.StageProjected, Function: f1, Code: factum.CodeOk})
	rt.Signals().Signal(factum.Signal{CommandID: cmd.ID, Stage: factum.StageProjected, Function: f2, Code: factum.CodeOk})
	close(g.release)
	<-done
	var stages []factum.CommandStage
	for _, r := range got {
		stages = append(stages, r.Stage)
	}
	if len(got) != 4 || stages[0] != factum.StageSent || stages[1] != factum.StageProcessed || stages[2] != factum.StageProjected || stages[3] != factum.StageProjected {
		t.Fatalf("stream stages %v", stages)
	}
	if last := got[len(got)-1]; !last.Succeeded() || last.AggregateVersion != 1 {
		t.Fatalf("last %+v", last)
	}
	if n := gw.Waiters().Len(); n != 0 {
		t.Fatalf("%d waiters left", n)
	}
}

// A failed signal from a required function fails the branch wait; a
// function target narrows whom the wait needs.
func TestBranchFailureAndTarget(t *testing.T) {
	f1 := factum.Function{Context: "test", Processor: "proj", Name: "one"}
	f2 := factum.Function{Context: "test", Processor: "other", Name: "two"}
	rt, def, g := branchRuntime(t, f1, f2)
	gw := rt.Gateway()
	for _, tc := range []struct {
		name   string
		plan   command.WaitPlan
		signal factum.Signal
		want   factum.Code
	}{
		{"failure", command.Wait(factum.StageProjected), factum.Signal{Stage: factum.StageProjected, Function: f2, Code: factum.CodeIllegalState, Message: "projection broke"}, factum.CodeIllegalState},
		{"target", command.Wait(factum.StageProjected).For(factum.Function{Processor: "proj"}), factum.Signal{Stage: factum.StageProjected, Function: f1, Code: factum.CodeOk}, factum.CodeOk},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cmd := factum.NewCommand(def.ID(tc.name), Block{})
			errc := make(chan error, 1)
			go func() {
				_, err := gw.SendAndWait(context.Background(), cmd, tc.plan)
				errc <- err
			}()
			<-g.entered
			sig := tc.signal
			sig.CommandID = cmd.ID
			rt.Signals().Signal(sig)
			g.release <- struct{}{}
			mustCode(t, <-errc, tc.want)
		})
	}
	close(g.release)
}

func TestGatewayRefusals(t *testing.T) {
	rt, def := newRuntime(t, engine.Config{MaxTimeout: time.Minute}, nil)
	gw := rt.Gateway()
	id := def.ID("ref")
	cases := []struct {
		name string
		cmd  factum.Command
		plan command.WaitPlan
		want factum.Code
	}{
		{"validation", factum.NewCommand(id, Add{N: -1}), processed(), factum.CodeCommandValidation},
		{"void awaited", factum.NewCommand(id, Fire{}), processed(), factum.CodeIllegalArgument},
		{"timeout above cap", factum.NewCommand(id, Add{N: 1}), processed().Within(time.Hour), factum.CodeIllegalArgument},
		{"unknown aggregate", factum.NewCommand(factum.NamedAggregate{Context: "x", Aggregate: "y"}.WithID("1"), Add{N: 1}), processed(), factum.CodeNotFound},
		{"unknown command", factum.NewCommand(id, struct{ X int }{}), processed(), factum.CodeIllegalArgument},
		{"bad request id", factum.NewCommand(id, Add{N: 1}).WithRequestID("a/b"), processed(), factum.CodeIllegalArgument},
		{"target on PROCESSED", factum.NewCommand(id, Add{N: 1}), processed().For(factum.Function{Name: "x"}), factum.CodeIllegalArgument},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r, err := gw.SendAndWait(context.Background(), c.cmd, c.plan)
			mustCode(t, err, c.want)
			if r.Stage != factum.StageSent || r.Succeeded() {
				t.Fatalf("%+v", r)
			}
		})
	}
	r, err := gw.SendAndWait(context.Background(), factum.NewCommand(id, Add{N: -1}), processed())
	if len(r.Bindings) != 1 || r.Bindings[0].Field != "n" || !errors.Is(err, factum.ErrCommandValidation) {
		t.Fatalf("bindings %+v %v", r.Bindings, err)
	}
	// A void command may be sent.
	if r, err := gw.Send(context.Background(), factum.NewCommand(id, Fire{})); err != nil || r.Stage != factum.StageSent {
		t.Fatalf("%+v %v", r, err)
	}
}

func TestLookup(t *testing.T) {
	rt, def := newRuntime(t, engine.Config{}, nil)
	gw := rt.Gateway()
	id := def.ID("lk")
	sent, err := gw.SendAndWait(context.Background(), factum.NewCommand(id, Add{N: 1}).WithRequestID("req-lk"), processed())
	if err != nil {
		t.Fatal(err)
	}
	r, err := gw.Lookup(context.Background(), id, "req-lk")
	if err != nil || r.CommandID != sent.CommandID || r.AggregateVersion != 1 || len(r.EventNames) != 1 || r.EventNames[0] != "added" {
		t.Fatalf("%+v %v", r, err)
	}
	_, err = gw.Lookup(context.Background(), id, "req-none")
	mustCode(t, err, factum.CodeNotFound)
	// The duplicate from the pre-check path carries the original command.
	dup, err := gw.Send(context.Background(), factum.NewCommand(id, Add{N: 1}).WithRequestID("req-lk"))
	if err != nil || !dup.Duplicate || dup.Results["originalCommandId"] != sent.CommandID {
		t.Fatalf("%+v %v", dup, err)
	}
}

// branchRuntime starts a runtime whose PROJECTED stage fns consume and
// whose commands wait at the gate it returns.
func branchRuntime(t *testing.T, fns ...factum.Function) (*engine.Engine, *aggregate.Definition[Counter], *gate) {
	t.Helper()
	g := newGate()
	rt, def := newRuntime(t, engine.Config{Consumers: &consumers{fns: map[factum.CommandStage][]factum.Function{factum.StageProjected: fns}}}, g)
	return rt, def, g
}
