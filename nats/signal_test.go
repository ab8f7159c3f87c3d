package nats

import (
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/factum-go/factum"
	natsgo "github.com/nats-io/nats.go"
)

// recorder is a local sink that keeps what it is given.
type recorder struct {
	mu   sync.Mutex
	sigs []factum.Signal
	got  chan struct{}
}

func newRecorder() *recorder { return &recorder{got: make(chan struct{}, 1024)} }

func (r *recorder) Signal(s factum.Signal) {
	r.mu.Lock()
	r.sigs = append(r.sigs, s)
	r.mu.Unlock()
	r.got <- struct{}{}
}

func (r *recorder) all() []factum.Signal {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]factum.Signal(nil), r.sigs...)
}

// await waits for n signals in all.
func (r *recorder) await(t *testing.T, n int) []factum.Signal {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for len(r.all()) < n {
		select {
		case <-r.got:
		case <-deadline:
			t.Fatalf("%d signals arrived, want %d", len(r.all()), n)
		}
	}
	return r.all()
}

// newSignals connects an instance's signal transport to url, on prefix.
func newSignals(t *testing.T, url, prefix, instance string) (*Signals, *recorder) {
	t.Helper()
	nc, err := natsgo.Connect(url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	s, err := NewSignals(SignalsConfig{Conn: nc, Instance: instance, Prefix: prefix})
	if err != nil {
		t.Fatal(err)
	}
	rec := newRecorder()
	if _, err := s.Sink(rec); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s, rec
}

// A signal reaches the instance its origin names, whole, and only that
// one; a signal of a local command, or of one naming no instance, never
// leaves the process.
func TestSignalsReachTheOriginOnly(t *testing.T) {
	url := startServer(t).ClientURL()
	prefix := "t" + factum.NewID()[:8] + ".signal"
	a, recA := newSignals(t, url, prefix, "a")
	b, recB := newSignals(t, url, prefix, "b")
	c, recC := newSignals(t, url, prefix, "c")

	full := factum.Signal{
		Stage: factum.StageSagaHandled, CommandID: "cmd-1", RequestID: "req-1",
		AggregateID:      factum.NamedAggregate{Context: "shop", Aggregate: "order"}.WithID("o-1").WithTenant("acme"),
		AggregateVersion: 3, Function: factum.Function{Context: "shop", Processor: "fulfilment", Name: "on_order_placed"},
		EventNames: []string{"order_placed"}, Code: factum.CodeNotFound, Message: "no such sku",
		Bindings: []factum.BindingError{{Field: "sku", Message: "unknown"}},
		Results:  map[string]any{"commandIds": []any{"x", "y"}}, Duplicate: true, Note: "n",
		SignalTime: time.Date(2026, 12, 1, 10, 0, 0, 123456789, time.UTC), Origin: "b",
	}
	a.Signal(full)                                                                                    // to b, over NATS
	a.Signal(factum.Signal{Stage: factum.StageSnapshot, CommandID: "cmd-2", Origin: "a"})             // a's own: local
	a.Signal(factum.Signal{Stage: factum.StageSnapshot, CommandID: "cmd-3"})                          // no origin: local
	c.Signal(factum.Signal{Stage: factum.StageSnapshot, CommandID: "cmd-4", Origin: "a"})             // to a, over NATS
	c.Signal(factum.Signal{Stage: factum.StageSnapshot, CommandID: "cmd-5", Origin: "gone"})          // nobody listens
	c.Signal(factum.Signal{Stage: factum.StageSnapshot, CommandID: "cmd-6", Origin: "bad.subject.>"}) // refused

	got := recB.await(t, 1)
	want := full
	want.Origin = "" // routing: not carried
	if !reflect.DeepEqual(got[0], want) {
		t.Fatalf("b received\n%+v\nwant\n%+v", got[0], want)
	}
	gotA := recA.await(t, 3)
	ids := map[string]bool{}
	for _, s := range gotA {
		ids[s.CommandID] = true
	}
	if !ids["cmd-2"] || !ids["cmd-3"] || !ids["cmd-4"] {
		t.Fatalf("a received %v, want cmd-2, cmd-3 and cmd-4", ids)
	}
	// Let anything misrouted arrive before counting.
	time.Sleep(100 * time.Millisecond)
	if n := len(recA.all()); n != 3 {
		t.Fatalf("a received %d signals, want 3", n)
	}
	if n := len(recB.all()); n != 1 {
		t.Fatalf("b received %d signals, want 1", n)
	}
	if n := len(recC.all()); n != 0 {
		t.Fatalf("c received %d signals, want 0", n)
	}
	if st := a.Stats(); st != (SignalStats{Local: 2, Sent: 1, Received: 1}) {
		t.Fatalf("a's stats %+v", st)
	}
	if st := c.Stats(); st != (SignalStats{Sent: 2, Dropped: 1}) {
		t.Fatalf("c's stats %+v", st)
	}
	_ = b
}

func TestSignalsConfigIsChecked(t *testing.T) {
	url := startServer(t).ClientURL()
	nc, err := natsgo.Connect(url)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	for name, cfg := range map[string]SignalsConfig{
		"no connection":  {Instance: "a"},
		"no instance":    {Conn: nc},
		"a dotted name":  {Conn: nc, Instance: "a.b"},
		"a wildcard":     {Conn: nc, Instance: "*"},
		"a spaced name":  {Conn: nc, Instance: "a b"},
		"a wild prefix":  {Conn: nc, Instance: "a", Prefix: "factum.>"},
		"an empty token": {Conn: nc, Instance: "a", Prefix: "factum..signal"},
	} {
		if _, err := NewSignals(cfg); factum.CodeOf(err) != factum.CodeIllegalArgument {
			t.Errorf("%s: %v, want IllegalArgument", name, err)
		}
	}
	s, err := NewSignals(SignalsConfig{Conn: nc, Instance: "a"})
	if err != nil {
		t.Fatal(err)
	}
	if s.Subject() != "factum.signal.a" {
		t.Fatalf("subject %q", s.Subject())
	}
	if _, err := s.Sink(newRecorder()); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Sink(newRecorder()); factum.CodeOf(err) != factum.CodeIllegalState {
		t.Fatalf("second Sink: %v, want IllegalState", err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
}
