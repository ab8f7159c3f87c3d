package nats

import (
	"context"
	"fmt"
	"math"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/command"
	"github.com/factum-go/factum/engine"
	natsgo "github.com/nats-io/nats.go"
)

// A bus wrapped by Signals.Bus, as factum serve wires it, still hands a
// delivered batch to an executor that takes runs as one run: the wrapper
// that names each signal's origin keeps the executor's runs.
func TestSignalsBusKeepsRuns(t *testing.T) {
	w := inProcessWorld(t, 1, 30*time.Second)
	n := w.node(t, "a", BusConfig{})
	n.waitOwns(t, 1)
	s, err := NewSignals(SignalsConfig{Conn: n.nc, Instance: "a", Prefix: w.prefix + ".signal"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	exec := &runExec{}
	sink, err := s.Sink(exec)
	if err != nil {
		t.Fatal(err)
	}
	var bus *Bus
	eb, err := s.Bus(func(proc command.Executor, sink command.Sink) (engine.Bus, error) {
		eb, err := n.newBus(proc, sink)
		if err == nil {
			bus = eb.(*Bus)
		}
		return eb, err
	})(exec, sink)
	if err != nil {
		t.Fatal(err)
	}
	eb.Start(context.Background())
	t.Cleanup(func() { _ = bus.Shutdown(context.Background()) })
	waitFor(t, 30*time.Second, "the claim to catch up", func() bool { return bus.claimOf(0) != 0 && settledBus(bus) })
	sendBatchMsg(t, bus, "t-1", "b0", "b1", "b2", "b3", "b4")
	if runs, alone := exec.waitSeen(t, 5); fmt.Sprint(runs) != "[5]" || len(alone) != 0 {
		t.Errorf("runs %v, alone %v; want one run of 5", runs, alone)
	}
}

// Signals for another instance routed together (SignalOriginBatch) travel
// as one message and arrive in order; ones too large for one message, or
// among which one does not encode, travel one each (only that one is
// dropped); a batch whose count does not match its header is dropped and
// counted, not delivered in part.
func TestSignalBatchTravelsAsOneMessage(t *testing.T) {
	w := inProcessWorld(t, 1, 3*time.Second)
	prefix := w.prefix + ".signal"
	connect := func() *natsgo.Conn {
		nc, err := natsgo.Connect(w.url)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(nc.Close)
		return nc
	}
	ac, bc := connect(), connect()
	a, err := NewSignals(SignalsConfig{Conn: ac, Instance: "a", Prefix: prefix})
	if err != nil {
		t.Fatal(err)
	}
	b, err := NewSignals(SignalsConfig{Conn: bc, Instance: "b", Prefix: prefix})
	if err != nil {
		t.Fatal(err)
	}
	got := make(chan factum.Signal, 16)
	if _, err := b.Sink(sigSink(got)); err != nil {
		t.Fatal(err)
	}
	raw, err := bc.SubscribeSync(SignalSubject(prefix, "b"))
	if err != nil {
		t.Fatal(err)
	}
	if err := bc.Flush(); err != nil {
		t.Fatal(err)
	}
	sigs := func(msg string, ids ...string) []factum.Signal {
		var ss []factum.Signal
		for _, id := range ids {
			ss = append(ss, factum.Signal{CommandID: id, Stage: factum.StageProcessed, Message: msg})
		}
		return ss
	}
	receive := func(want ...string) {
		t.Helper()
		for _, id := range want {
			select {
			case s := <-got:
				if s.CommandID != id {
					t.Fatalf("signal of %s arrived, want %s", s.CommandID, id)
				}
			case <-time.After(10 * time.Second):
				t.Fatalf("signal of %s did not arrive", id)
			}
		}
	}
	messages := func(want int, header string) {
		t.Helper()
		for i := range want {
			m, err := raw.NextMsg(10 * time.Second)
			if err != nil {
				t.Fatalf("message %d of %d: %v", i+1, want, err)
			}
			if h := m.Header.Get(HeaderSignals); h != header {
				t.Errorf("message %d: %s %q, want %q", i+1, HeaderSignals, h, header)
			}
		}
		if m, err := raw.NextMsg(200 * time.Millisecond); err == nil {
			t.Errorf("one message more than %d: %s", want, m.Data)
		}
	}

	a.SignalOriginBatch("b", sigs("", "c0", "c1", "c2"))
	receive("c0", "c1", "c2")
	messages(1, "3")

	big := strings.Repeat("x", int(ac.MaxPayload()/2))
	a.SignalOriginBatch("b", sigs(big, "d0", "d1"))
	receive("d0", "d1")
	messages(2, "")

	bad := sigs("", "f0", "f1", "f2")
	bad[1].Results = map[string]any{"x": math.Inf(1)} // no JSON for it
	a.SignalOriginBatch("b", bad)
	receive("f0", "f2")
	messages(2, "")
	if d := a.Stats().Dropped; d != 1 {
		t.Errorf("a dropped %d signals, want 1 (the one that does not encode)", d)
	}

	two, err := encodeSignals(sigs("", "e0", "e1"))
	if err != nil {
		t.Fatal(err)
	}
	if err := ac.PublishMsg(&natsgo.Msg{Subject: SignalSubject(prefix, "b"), Header: natsgo.Header{HeaderSignals: []string{"3"}}, Data: two}); err != nil {
		t.Fatal(err)
	}
	messages(1, "3")
	waitFor(t, 10*time.Second, "the malformed batch to be dropped", func() bool { return b.Stats().Dropped == 3 })
	select {
	case s := <-got:
		t.Errorf("signal of %s delivered from a malformed batch", s.CommandID)
	default:
	}
	if st := a.Stats(); st.Sent != 7 {
		t.Errorf("a sent %d signals, want 7", st.Sent)
	}
	if st := b.Stats(); st.Received != 7 {
		t.Errorf("b received %d signals, want 7", st.Received)
	}
}

// batchSink is a sink that routes by origin and records how it was
// handed each signal: alone, or with others of one origin.
type batchSink struct {
	mu      sync.Mutex
	batches [][]string // the command IDs of each SignalOriginBatch, and its origin first
	alone   []string
}

func (s *batchSink) Signal(sig factum.Signal) { s.SignalOrigin("", sig) }

func (s *batchSink) SignalOrigin(_ string, sig factum.Signal) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.alone = append(s.alone, sig.RequestID)
}

func (s *batchSink) SignalOriginBatch(origin string, sigs []factum.Signal) {
	s.mu.Lock()
	defer s.mu.Unlock()
	b := []string{origin}
	for _, sig := range sigs {
		b = append(b, sig.RequestID)
	}
	s.batches = append(s.batches, b)
}

// The PROCESSED signals of a delivered batch go to a sink that takes
// several at once in one call per origin, in the batch's order.
func TestBatchSignalsLeaveTogether(t *testing.T) {
	sink := &batchSink{}
	exec := &runExec{}
	w := inProcessWorld(t, 1, 30*time.Second)
	n := w.node(t, "a", BusConfig{})
	n.waitOwns(t, 1)
	eb, err := n.newBus(exec, sink)
	if err != nil {
		t.Fatal(err)
	}
	bus := eb.(*Bus)
	bus.Start(context.Background())
	t.Cleanup(func() { _ = bus.Shutdown(context.Background()) })
	waitFor(t, 30*time.Second, "the claim to catch up", func() bool { return bus.claimOf(0) != 0 && settledBus(bus) })
	sendBatchMsgFrom(t, bus, "b", "t-1", "b0", "b1", "b2")
	waitFor(t, 10*time.Second, "the batch's signals", func() bool {
		sink.mu.Lock()
		defer sink.mu.Unlock()
		return len(sink.batches)+len(sink.alone) > 0
	})
	sink.mu.Lock()
	defer sink.mu.Unlock()
	if fmt.Sprint(sink.batches) != "[[b b0 b1 b2]]" || len(sink.alone) != 0 {
		t.Errorf("batches %v, alone %v; want one batch for b: b0 b1 b2", sink.batches, sink.alone)
	}
}
