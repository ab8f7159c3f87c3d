package nats

import (
	"context"
	"testing"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/command"
	"github.com/factum-go/factum/engine"
)

// forgettingExecutor records what it is asked.
type forgettingExecutor struct{ forgot []string }

func (f *forgettingExecutor) Process(_ context.Context, cmd *factum.Command) factum.Signal {
	return factum.Signal{Stage: factum.StageProcessed, CommandID: cmd.ID}
}
func (f *forgettingExecutor) Forget(id factum.AggregateID) { f.forgot = append(f.forgot, id.ID) }

// sendRecorder is a bus that keeps the commands sent.
type sendRecorder struct {
	engine.Bus
	sent []*factum.Command
}

func (b *sendRecorder) Send(_ context.Context, cmd *factum.Command) error {
	b.sent = append(b.sent, cmd)
	return nil
}

// The bus wrapper stamps this instance as every command's origin, over an
// inherited one and without touching the caller's header; the executor
// it hands the bus names the origin on PROCESSED and still forgets states.
func TestTheBusStampsTheOriginAndKeepsTheForgetter(t *testing.T) {
	s := &Signals{cfg: SignalsConfig{Instance: "web-1"}}
	var gotProc command.Executor
	rec := &sendRecorder{}
	next := func(proc command.Executor, _ command.Sink) (engine.Bus, error) {
		gotProc = proc
		return rec, nil
	}
	exec := &forgettingExecutor{}
	bus, err := s.Bus(next)(exec, newRecorder())
	if err != nil {
		t.Fatal(err)
	}
	inherited := map[string]string{factum.OriginHeader: "web-2", "traceparent": "t"}
	cmd := &factum.Command{ID: "c-1", Header: inherited}
	if err := bus.Send(context.Background(), cmd); err != nil {
		t.Fatal(err)
	}
	if len(rec.sent) != 1 || rec.sent[0].Header[factum.OriginHeader] != "web-1" || rec.sent[0].Header["traceparent"] != "t" {
		t.Fatalf("sent %+v", rec.sent[0].Header)
	}
	if inherited[factum.OriginHeader] != "web-2" {
		t.Fatal("the caller's header map was changed")
	}
	if sig := gotProc.Process(context.Background(), &factum.Command{ID: "c-2", Header: map[string]string{factum.OriginHeader: "web-3"}}); sig.Origin != "web-3" || sig.CommandID != "c-2" {
		t.Fatalf("PROCESSED %+v, want origin web-3", sig)
	}
	f, ok := gotProc.(interface{ Forget(factum.AggregateID) })
	if !ok {
		t.Fatal("the bus's executor lost Forget")
	}
	f.Forget(factum.AggregateID{ID: "cart-1"})
	if len(exec.forgot) != 1 || exec.forgot[0] != "cart-1" {
		t.Fatalf("forgot %v", exec.forgot)
	}
}
