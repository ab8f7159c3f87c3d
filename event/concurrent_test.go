package event_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/event"
	"github.com/factum-go/factum/eventstore"
)

// versionTracker checks that each aggregate's streams arrive in version
// order and counts deliveries.
type versionTracker struct {
	mu    sync.Mutex
	last  map[factum.AggregateID]int
	count map[string]int // by stream ID
	bad   []string
}

func newVersionTracker() *versionTracker {
	return &versionTracker{last: map[factum.AggregateID]int{}, count: map[string]int{}}
}

func (v *versionTracker) see(s *factum.EventStream, redeliveries bool) {
	v.mu.Lock()
	defer v.mu.Unlock()
	last := v.last[s.AggregateID]
	ok := s.Version == last+1 || redeliveries && s.Version <= last+1
	if !ok {
		v.bad = append(v.bad, fmt.Sprintf("%s: version %d after %d", s.AggregateID.ID, s.Version, last))
	}
	v.last[s.AggregateID] = s.Version
	v.count[s.ID]++
}

func (v *versionTracker) delivered() int {
	v.mu.Lock()
	defer v.mu.Unlock()
	return len(v.count)
}

// handledOnceInOrder waits until total streams were delivered and the
// group's checkpoint reached last, then fails the test unless every
// aggregate's streams came in version order, each once.
func (v *versionTracker) handledOnceInOrder(t *testing.T, total int, cps *event.MemoryCheckpoints, group factum.Function, last factum.Position) {
	t.Helper()
	waitFor(t, "every stream", func() bool { return v.delivered() == total })
	waitFor(t, "the checkpoint at the end", func() bool {
		pos, _ := cps.Checkpoint(context.Background(), group)
		return pos == last
	})
	v.mu.Lock()
	defer v.mu.Unlock()
	if len(v.bad) > 0 {
		t.Fatalf("out of order: %v", v.bad)
	}
	for id, n := range v.count {
		if n != 1 {
			t.Fatalf("stream %s handled %d times", id, n)
		}
	}
}

// With Concurrency, streams of different aggregates are handled at once,
// but each aggregate's in version order, each exactly once when nothing
// fails, and the checkpoint ends at the log's end.
func TestConcurrentConsumerKeepsAggregateOrder(t *testing.T) {
	st := eventstore.NewMemory()
	cps := event.NewMemoryCheckpoints()
	vt := newVersionTracker()
	var running, most atomic.Int32
	p := event.MustProcessor("shop", "concurrent", factum.StageEventHandled,
		event.OnStream("item_added", func(ctx context.Context, s *factum.EventStream) error {
			n := running.Add(1)
			for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
			}
			time.Sleep(50 * time.Microsecond)
			vt.see(s, false)
			running.Add(-1)
			return nil
		}, nil))
	c, err := event.NewConsumer(p, event.Config{Log: st, Checkpoints: cps, BatchSize: 64, Concurrency: 4})
	if err != nil {
		t.Fatal(err)
	}
	const aggregates, versions = 16, 25
	var last *factum.EventStream
	for v := 1; v <= versions; v++ {
		for a := range aggregates {
			last = appendStream(t, st, fmt.Sprint("a-", a), v, "item_added")
		}
	}
	start(t, c)
	vt.handledOnceInOrder(t, aggregates*versions, cps, p.Name(), last.Position)
	if most.Load() < 2 {
		t.Fatalf("at most %d streams were handled at once, want several", most.Load())
	}
}

// A failure that cannot be recorded stops the checkpoint before its
// stream, whatever the other lanes did; once recording works, the stream
// is handled again, its failure recorded once, and the log finished.
func TestConcurrentConsumerDoesNotAdvancePastUnrecordedFailure(t *testing.T) {
	st := eventstore.NewMemory()
	cps := event.NewMemoryCheckpoints()
	vt := newVersionTracker()
	var recordOK atomic.Bool
	var recorded atomic.Int32
	p := event.MustProcessor("shop", "failing", factum.StageProjected,
		event.OnStream("item_added", func(ctx context.Context, s *factum.EventStream) error {
			vt.see(s, true)
			if s.AggregateID.ID == "a-3" && s.Version == 5 {
				return errors.New("always")
			}
			return nil
		}, nil))
	c, err := event.NewConsumer(p, event.Config{
		Log: st, Checkpoints: cps, Attempts: 1, Backoff: time.Millisecond, Logger: quiet, BatchSize: 64, Concurrency: 4,
		Failures: event.FailureRecorderFunc(func(ctx context.Context, f event.Failure) error {
			if !recordOK.Load() {
				return errors.New("compensation store down")
			}
			recorded.Add(1)
			return nil
		}),
	})
	if err != nil {
		t.Fatal(err)
	}
	var failing, last *factum.EventStream
	for v := 1; v <= 10; v++ {
		for a := range 8 {
			last = appendStream(t, st, fmt.Sprint("a-", a), v, "item_added")
			if a == 3 && v == 5 {
				failing = last
			}
		}
	}
	start(t, c)
	time.Sleep(50 * time.Millisecond)
	if pos, _ := cps.Checkpoint(context.Background(), p.Name()); !pos.Less(failing.Position) {
		t.Fatalf("checkpoint %v is not before the unrecorded failure at %v", pos, failing.Position)
	}
	recordOK.Store(true)
	waitFor(t, "the checkpoint at the end", func() bool {
		pos, _ := cps.Checkpoint(context.Background(), p.Name())
		return pos == last.Position
	})
	if n := recorded.Load(); n != 1 {
		t.Fatalf("failure recorded %d times, want once", n)
	}
	vt.mu.Lock()
	defer vt.mu.Unlock()
	if len(vt.bad) > 0 {
		t.Fatalf("out of order: %v", vt.bad)
	}
	if len(vt.count) != 80 {
		t.Fatalf("%d streams handled, want 80", len(vt.count))
	}
	if vt.count[failing.ID] < 2 {
		t.Fatalf("the failing stream was handled %d times, want again once its failure could be recorded", vt.count[failing.ID])
	}
}

// Batches after batches, some of one aggregate only (every lane but one
// idle) and some spread over many, are each handled whole: a lane's work
// from one batch never counts in the next, so every stream is handled
// once, in order, and the checkpoint ends at the log's end.
func TestConcurrentConsumerBatchesOfFewAndManyAggregates(t *testing.T) {
	for _, c := range []struct {
		name   string
		layout []int // aggregates per run of 8 streams
	}{
		{"one aggregate, then many", []int{1, 1, 8, 8, 1, 8}},
		{"many, then one aggregate", []int{8, 8, 1, 1, 8, 1}},
		{"two aggregates", []int{2, 2, 2, 2}},
	} {
		t.Run(c.name, func(t *testing.T) {
			st := eventstore.NewMemory()
			cps := event.NewMemoryCheckpoints()
			vt := newVersionTracker()
			p := event.MustProcessor("shop", "lanes", factum.StageEventHandled,
				event.OnStream("item_added", func(ctx context.Context, s *factum.EventStream) error {
					vt.see(s, false)
					return nil
				}, nil))
			con, err := event.NewConsumer(p, event.Config{Log: st, Checkpoints: cps, BatchSize: 8, Concurrency: 4})
			if err != nil {
				t.Fatal(err)
			}
			versions := map[string]int{}
			total := 0
			var last *factum.EventStream
			for r, n := range c.layout {
				for i := range 8 {
					id := fmt.Sprintf("r%d-a%d", r, i%n)
					versions[id]++
					last = appendStream(t, st, id, versions[id], "item_added")
					total++
				}
			}
			start(t, con)
			vt.handledOnceInOrder(t, total, cps, p.Name(), last.Position)
		})
	}
}
