package event_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/event"
	"github.com/factum-go/factum/eventstore"
)

// countingCheckpoints counts the saves that reach a checkpoint store and
// checks each against the streams handled so far: a save may never pass a
// stream not yet handled.
type countingCheckpoints struct {
	event.CheckpointStore
	saves   atomic.Int64
	mu      sync.Mutex
	handled map[factum.Position]bool
	order   []factum.Position // the log's positions, in order
	t       *testing.T
}

func (c *countingCheckpoints) handle(pos factum.Position) {
	c.mu.Lock()
	c.handled[pos] = true
	c.mu.Unlock()
}

func (c *countingCheckpoints) SaveCheckpoint(ctx context.Context, g factum.Function, pos factum.Position) error {
	c.saves.Add(1)
	c.mu.Lock()
	for _, p := range c.order {
		if pos.Less(p) {
			break
		}
		if !c.handled[p] {
			c.t.Errorf("checkpoint saved at %s past unhandled stream %s", pos, p)
		}
	}
	c.mu.Unlock()
	return c.CheckpointStore.SaveCheckpoint(ctx, g, pos)
}

// trickle is a log that returns at most one stream per read, as a busy
// log does when the consumer keeps up with its appends.
type trickle struct{ eventstore.Store }

func (l trickle) ReadLog(ctx context.Context, after factum.Position, limit int) ([]factum.EventStream, error) {
	return l.Store.ReadLog(ctx, after, 1)
}

// A consumer whose reads return one stream each saves its checkpoint once
// per CheckpointStreams streams, not once per read, and never past a
// stream it has not handled; on stop it saves the last one.
func TestConsumerBatchesCheckpointSaves(t *testing.T) {
	for _, c := range []struct {
		name           string
		streams, every int
		interval       time.Duration
		maxSaves       int64
	}{
		{"by count", 500, 50, time.Hour, 500/50 + 1},
		{"every read (negative interval)", 60, 50, -1, 60},
	} {
		t.Run(c.name, func(t *testing.T) {
			st := eventstore.NewMemory()
			var positions []factum.Position
			for i := range c.streams {
				positions = append(positions, appendStream(t, st, "c"+string(rune('a'+i%26)), i/26+1, "item_added").Position)
			}
			cps := &countingCheckpoints{CheckpointStore: event.NewMemoryCheckpoints(), handled: map[factum.Position]bool{}, order: positions, t: t}
			var n atomic.Int64
			p := event.MustProcessor("shop", "batched", factum.StageProjected,
				event.On(func(ctx context.Context, m event.Message, e ItemAdded) error {
					cps.handle(m.Stream.Position)
					n.Add(1)
					return nil
				}))
			cons, err := event.NewConsumer(p, event.Config{Log: trickle{st}, Checkpoints: cps,
				CheckpointStreams: c.every, CheckpointInterval: c.interval, PollInterval: time.Hour})
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan error, 1)
			go func() { done <- cons.Run(ctx) }()
			waitFor(t, "every stream handled", func() bool { return n.Load() == int64(c.streams) })
			cancel()
			if err := <-done; err != nil {
				t.Fatal(err)
			}
			if got := cps.saves.Load(); got > c.maxSaves || got < int64(c.streams/c.every) {
				t.Errorf("%d checkpoint saves for %d streams, want between %d and %d", got, c.streams, c.streams/c.every, c.maxSaves)
			}
			if pos, _ := cps.Checkpoint(context.Background(), p.Name()); pos != positions[len(positions)-1] {
				t.Errorf("checkpoint after stop = %s, want the last stream %s", pos, positions[len(positions)-1])
			}
		})
	}
}

// A consumer that has caught up saves its unsaved streams once the
// interval has passed, without waiting for more streams or a stop.
func TestConsumerSavesAnIdleBatchAfterTheInterval(t *testing.T) {
	st := eventstore.NewMemory()
	cps := event.NewMemoryCheckpoints()
	p := event.MustProcessor("shop", "idle", factum.StageProjected,
		event.On(func(ctx context.Context, m event.Message, e ItemAdded) error { return nil }))
	cons, err := event.NewConsumer(p, event.Config{Log: st, Checkpoints: cps,
		CheckpointStreams: 1000, CheckpointInterval: 20 * time.Millisecond, PollInterval: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	start(t, cons)
	s := appendStream(t, st, "x", 1, "item_added")
	waitFor(t, "the checkpoint at the stream", func() bool {
		pos, _ := cps.Checkpoint(context.Background(), p.Name())
		return pos == s.Position
	})
}
