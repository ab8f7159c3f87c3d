package engine_test

import (
	"context"
	"testing"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/command"
	"github.com/factum-go/factum/engine"
	"github.com/factum-go/factum/eventstore"
)

// A caller whose context is already done sends nothing: every way of
// sending fails, and nothing is appended behind its back.
func TestACancelledCallerSendsNothing(t *testing.T) {
	store := eventstore.NewMemory()
	rt, def := newRuntime(t, engine.Config{Store: store}, nil)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	gw := rt.Gateway()
	id := def.ID("c-cancelled")
	if _, err := gw.Send(ctx, factum.NewCommand(id, Add{N: 1})); err == nil {
		t.Error("Send with a cancelled context succeeded")
	}
	if _, err := gw.SendAndWait(ctx, factum.NewCommand(id, Add{N: 1}), command.Wait(factum.StageProcessed)); err == nil {
		t.Error("SendAndWait with a cancelled context succeeded")
	}
	for _, err := range gw.SendAndWaitStream(ctx, factum.NewCommand(id, Add{N: 1}), command.Wait(factum.StageProcessed)) {
		if err == nil {
			t.Error("SendAndWaitStream with a cancelled context yielded a success")
		}
	}
	if err := rt.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got, _ := store.Load(context.Background(), id, 1, eventstore.MaxVersion); len(got) != 0 {
		t.Fatalf("%d streams appended for a caller that had given up", len(got))
	}
}
