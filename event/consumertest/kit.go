package consumertest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/event"
	"github.com/factum-go/factum/eventstore"
	"github.com/factum-go/factum/internal/kit"
)

// Setup is one implementation under test, fresh for each case.
type Setup struct {
	// Store is an empty event store; the kit appends to it, and the
	// consumers read its log.
	Store eventstore.Store
	// Start runs a consumer of p over Store's log, recording failures
	// with failures and emitting signals into notify, and returns a
	// function that stops it gracefully (it finishes the stream in hand
	// and saves its checkpoint) and returns once it has stopped. Started
	// again with a processor of the same identity, a consumer resumes from
	// the checkpoint the last one saved: the checkpoint store is the
	// setup's, shared by every Start.
	Start func(p *event.Processor, failures event.FailureRecorder, notify func(factum.Signal)) (stop func())
}

// Run checks the setups newSetup returns. Its cases run in parallel
// (t.Parallel), each on the setup newSetup returns for it.
func Run(t *testing.T, newSetup func(t *testing.T) Setup) {
	t.Helper()
	kit.RunParallel(t, newSetup, []kit.Case[Setup]{
		{Name: "ExactlyOnceWithoutFailures", Run: exactlyOnce},
		{Name: "AtLeastOnceWithFailures", Run: atLeastOnce},
		{Name: "CheckpointNeverPassesAnUnrecordedFailure", Run: unrecorded},
		{Name: "ReplayFromCheckpoint", Run: replay},
	})
}

// The kit's streams come from aggregates of this type, each with one event.
var kitAggregate = factum.NamedAggregate{Context: "consumertest", Aggregate: "item"}

const kitEvent = "kit_happened"

// log appends the kit's streams and remembers them.
type log struct {
	t       *testing.T
	store   eventstore.Store
	mu      sync.Mutex
	version map[string]int
	streams []string // stream IDs in append order
}

func newLog(t *testing.T, store eventstore.Store) *log {
	return &log{t: t, store: store, version: map[string]int{}}
}

// append appends n streams spread over the aggregates a-0 … a-(k-1).
func (l *log) append(n, k int) {
	l.t.Helper()
	for i := range n {
		l.mu.Lock()
		id := fmt.Sprintf("a-%d", (len(l.streams)+i)%k)
		l.version[id]++
		v := l.version[id]
		l.mu.Unlock()
		body, _ := json.Marshal(map[string]int{"version": v})
		s := &factum.EventStream{
			ID: factum.NewID(), AggregateID: kitAggregate.WithID(id).WithTenant(factum.DefaultTenant), Version: v,
			CommandID: factum.NewID(), RequestID: factum.NewID(), CreateTime: time.Now(),
			Events: []factum.DomainEvent{{ID: factum.NewID(), Name: kitEvent, Sequence: 1, IsLast: true, Body: body}},
		}
		if err := l.store.Append(context.Background(), s); err != nil {
			l.t.Fatalf("consumertest: append: %v", err)
		}
		l.mu.Lock()
		l.streams = append(l.streams, s.ID)
		l.mu.Unlock()
	}
}

func (l *log) ids() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.streams...)
}

// function is the kit's event function: it counts deliveries per stream,
// checks version order per aggregate, and fails as fail says.
type function struct {
	mu         sync.Mutex
	deliveries map[string]int // stream ID -> times delivered
	last       map[string]int // aggregate ID -> last version handled
	errs       []string
	fail       func(s *factum.EventStream) error
}

func newFunction(fail func(*factum.EventStream) error) *function {
	return &function{deliveries: map[string]int{}, last: map[string]int{}, fail: fail}
}

func (f *function) handle(_ context.Context, s *factum.EventStream) error {
	f.mu.Lock()
	f.deliveries[s.ID]++
	id := s.AggregateID.ID
	if s.Version < f.last[id] {
		f.errs = append(f.errs, fmt.Sprintf("aggregate %s: version %d handled after %d", id, s.Version, f.last[id]))
	}
	f.last[id] = max(f.last[id], s.Version)
	fail := f.fail
	f.mu.Unlock()
	if fail != nil {
		return fail(s)
	}
	return nil
}

func (f *function) count(id string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.deliveries[id]
}

func (f *function) check(t *testing.T) {
	t.Helper()
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, e := range f.errs {
		t.Error(e)
	}
}

func (f *function) processor(t *testing.T, name string) *event.Processor {
	t.Helper()
	p, err := event.NewProcessor("consumertest", name, factum.StageProjected, event.OnStream("on_"+kitEvent, f.handle, []string{kitEvent}))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// failures is the kit's FailureRecorder; it refuses to record while down.
type failures struct {
	mu       sync.Mutex
	down     bool
	refused  int
	recorded map[string]int // stream ID -> failures recorded
}

func newFailures() *failures { return &failures{recorded: map[string]int{}} }

func (r *failures) RecordFailure(_ context.Context, f event.Failure) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.down {
		r.refused++
		return errors.New("consumertest: failure store unavailable")
	}
	r.recorded[f.Stream.ID]++
	return nil
}

func (r *failures) setDown(down bool) {
	r.mu.Lock()
	r.down = down
	r.mu.Unlock()
}

func (r *failures) count(id string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.recorded[id]
}

func (r *failures) refusals() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.refused
}

// signals collects the signals of one consumer.
type signals struct {
	mu  sync.Mutex
	got map[string][]factum.Code // command ID -> codes signalled
}

func newSignals() *signals { return &signals{got: map[string][]factum.Code{}} }

func (s *signals) notify(sig factum.Signal) {
	s.mu.Lock()
	s.got[sig.CommandID] = append(s.got[sig.CommandID], sig.Code)
	s.mu.Unlock()
}

// waitFor polls cond until it holds or a generous deadline passes: the
// kit asserts outcomes, not speed.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("consumertest: timed out waiting for %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

func allDelivered(f *function, ids []string) func() bool {
	return func() bool {
		for _, id := range ids {
			if f.count(id) == 0 {
				return false
			}
		}
		return true
	}
}
