package nats

import (
	"context"
	"maps"
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

// Stamp sets the origin and leaves no wait behind: a wait in the header
// is the one its origin's send stamped (a saga's command inherits its
// source stream's, origin and wait), and kept beside another origin, or
// beside this one on another send, it would keep from this instance the
// signals its own wait needs. The sender's map stays as it was.
func TestStampLeavesNoInheritedWait(t *testing.T) {
	for _, tc := range []struct {
		name   string
		header map[string]string
		want   map[string]string
	}{
		{"none", nil, map[string]string{factum.OriginHeader: "b"}},
		{"stamped", map[string]string{factum.OriginHeader: "b", "k": "v"}, map[string]string{factum.OriginHeader: "b", "k": "v"}},
		{"another origin's wait", map[string]string{factum.OriginHeader: "a", factum.OriginWaitHeader: "SENT", "k": "v"},
			map[string]string{factum.OriginHeader: "b", "k": "v"}},
		{"an inherited wait of this origin", map[string]string{factum.OriginHeader: "b", factum.OriginWaitHeader: "SENT"},
			map[string]string{factum.OriginHeader: "b"}},
		{"a wait without origin", map[string]string{factum.OriginWaitHeader: "PROCESSED"}, map[string]string{factum.OriginHeader: "b"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sent := maps.Clone(tc.header)
			cmd := &factum.Command{Header: tc.header}
			Stamp(cmd, "b")
			if !maps.Equal(cmd.Header, tc.want) {
				t.Errorf("header %v, want %v", cmd.Header, tc.want)
			}
			if !maps.Equal(tc.header, sent) {
				t.Errorf("the sender's header became %v, want %v", tc.header, sent)
			}
		})
	}
}
