package event_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/event"
	"github.com/factum-go/factum/eventstore"
)

// countingLog counts a consumer's reads of the log and its waits, and runs
// onRead, if set, after each read that returned streams, before the
// consumer sees them.
type countingLog struct {
	eventstore.Store
	reads, waits atomic.Int64
	onRead       func(page []factum.EventStream)
}

func (l *countingLog) ReadLog(ctx context.Context, after factum.Position, limit int) ([]factum.EventStream, error) {
	l.reads.Add(1)
	page, err := l.Store.ReadLog(ctx, after, limit)
	if err == nil && len(page) > 0 && l.onRead != nil {
		l.onRead(page)
	}
	return page, err
}

func (l *countingLog) WaitLog(ctx context.Context, after factum.Position) error {
	l.waits.Add(1)
	return l.Store.WaitLog(ctx, after)
}

// countingConsumer returns a consumer group named processor over cfg's
// log, with checkpoints of its own, whose one function counts the
// item_added events it handles.
func countingConsumer(t *testing.T, processor string, cfg event.Config) (*event.Consumer, *atomic.Int64) {
	t.Helper()
	handled := new(atomic.Int64)
	p := event.MustProcessor("shop", processor, factum.StageProjected,
		event.On(func(ctx context.Context, m event.Message, e ItemAdded) error { handled.Add(1); return nil }))
	cfg.Checkpoints = event.NewMemoryCheckpoints()
	c, err := event.NewConsumer(p, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c, handled
}

// A consumer that keeps up with the appends reads the log once per stream:
// a page shorter than its BatchSize ended at the log's end, so it waits
// from there rather than reading an empty page first.
func TestConsumerThatKeepsUpReadsOncePerStream(t *testing.T) {
	st := eventstore.NewMemory()
	log := &countingLog{Store: st}
	c, handled := countingConsumer(t, "keeps_up", event.Config{Log: log, PollInterval: time.Hour, CheckpointInterval: time.Hour})
	start(t, c)
	waitFor(t, "the consumer waiting at the log's end", func() bool { return log.waits.Load() == 1 })
	const streams = 50
	for i := 1; i <= streams; i++ {
		appendStream(t, st, "k", i, "item_added")
		waitFor(t, "the stream handled and the consumer waiting again", func() bool {
			return handled.Load() == int64(i) && log.waits.Load() == int64(i+1)
		})
	}
	// The first read found the log empty; then one read per stream.
	if got := log.reads.Load(); got != streams+1 {
		t.Errorf("%d reads of the log for %d streams, want %d", got, streams, streams+1)
	}
}

// A stream appended after a consumer's short read, before its wait, is
// handled without a wake-up: the append's wake-up came before the wait,
// so only the wait's own look at the log can find it (PollInterval is an
// hour).
func TestConsumerFindsAStreamAppendedBeforeItsWait(t *testing.T) {
	for _, store := range []struct {
		name string
		new  func(t *testing.T) eventstore.Store
	}{
		{"memory", func(*testing.T) eventstore.Store { return eventstore.NewMemory() }},
		{"front end with a tail", func(t *testing.T) eventstore.Store {
			f, err := eventstore.New(eventstore.NewMemory().Backend(), eventstore.Config{TailStreams: 16, PollInterval: time.Hour})
			if err != nil {
				t.Fatal(err)
			}
			return f
		}},
	} {
		t.Run(store.name, func(t *testing.T) {
			st := store.new(t)
			var (
				once  sync.Once
				extra *factum.EventStream
			)
			log := &countingLog{Store: st}
			log.onRead = func([]factum.EventStream) {
				once.Do(func() { extra = appendStream(t, st, "b", 1, "item_added") })
			}
			c, handled := countingConsumer(t, "before_wait", event.Config{Log: log, PollInterval: time.Hour, CheckpointInterval: time.Hour})
			appendStream(t, st, "a", 1, "item_added")
			start(t, c)
			waitFor(t, "both streams handled", func() bool { return handled.Load() == 2 })
			if extra == nil {
				t.Fatal("no stream appended between the read and the wait")
			}
		})
	}
}

// A consumer whose log returns pages shorter than its BatchSize while
// more streams follow (a reader of a limited page, a log whose newest
// streams are not readable yet) still reads the whole log: each wait
// returns at once for the streams left.
func TestConsumerReadsOnAfterShortPagesOfALongLog(t *testing.T) {
	st := eventstore.NewMemory()
	const streams = 40
	for i := 1; i <= streams; i++ {
		appendStream(t, st, "long", i, "item_added")
	}
	c, handled := countingConsumer(t, "short_pages", event.Config{Log: trickle{st}, PollInterval: time.Hour})
	start(t, c)
	waitFor(t, "every stream handled", func() bool { return handled.Load() == streams })
}

// Consumer groups keeping up with concurrent appends, over a front end
// whose readers share reads of the log's end and waits at one position (a
// database's: its followers may take a shared read that began before an
// append), each handle every stream once, in log order, without a poll:
// every wait after a short page finds what came since.
func TestConsumersKeepingUpMissNothing(t *testing.T) {
	const groups, writers, perWriter = 4, 4, 60
	mem := eventstore.NewMemory().Backend()
	st, err := eventstore.New(&countingBackend{Backend: mem, waiter: mem.(eventstore.LogWaiter)}, eventstore.Config{PollInterval: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	seen := make([][]factum.Position, groups)
	for g := range groups {
		p := event.MustProcessor("shop", fmt.Sprint("keeping_up_", g), factum.StageProjected,
			event.On(func(ctx context.Context, m event.Message, e ItemAdded) error {
				mu.Lock()
				seen[g] = append(seen[g], m.Stream.Position)
				mu.Unlock()
				return nil
			}))
		c, err := event.NewConsumer(p, event.Config{Log: st, Checkpoints: event.NewMemoryCheckpoints(), PollInterval: time.Hour})
		if err != nil {
			t.Fatal(err)
		}
		start(t, c)
	}
	var writing sync.WaitGroup
	for w := range writers {
		writing.Go(func() {
			for v := 1; v <= perWriter; v++ {
				appendStream(t, st, fmt.Sprint("writer-", w), v, "item_added")
				if v%(w+2) == 0 {
					time.Sleep(time.Duration(v%3) * 100 * time.Microsecond)
				}
			}
		})
	}
	writing.Wait()
	waitFor(t, "every group at every stream", func() bool {
		mu.Lock()
		defer mu.Unlock()
		for _, s := range seen {
			if len(s) < writers*perWriter {
				return false
			}
		}
		return true
	})
	mu.Lock()
	defer mu.Unlock()
	for g, s := range seen {
		if len(s) != writers*perWriter {
			t.Fatalf("group %d handled %d streams, want %d", g, len(s), writers*perWriter)
		}
		for i := 1; i < len(s); i++ {
			if !s[i-1].Less(s[i]) {
				t.Fatalf("group %d handled %s after %s", g, s[i], s[i-1])
			}
		}
	}
}
