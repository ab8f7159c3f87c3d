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

// countingBackend counts the reads of the log and the waits that reach an
// event store's backend, under a front end that treats it as a database's
// (its tail and shared waits on).
type countingBackend struct {
	eventstore.Backend
	waiter       eventstore.LogWaiter
	reads, waits atomic.Int64
	ready        atomic.Int64 // waits that found a stream after their position at once
}

func (b *countingBackend) ReadLog(ctx context.Context, after factum.Position, limit int) ([]factum.EventStream, error) {
	b.reads.Add(1)
	return b.Backend.ReadLog(ctx, after, limit)
}

func (b *countingBackend) WaitLog(ctx context.Context, after factum.Position, woken <-chan struct{}) error {
	b.waits.Add(1)
	if page, err := b.Backend.ReadLog(ctx, after, 1); err == nil && len(page) > 0 {
		b.ready.Add(1)
	}
	return b.waiter.WaitLog(ctx, after, woken)
}

// BenchmarkConsumersKeepingUp runs four consumer groups over a log that
// eight writers append one-stream commands to, each pausing between its
// appends (a command's round trip) or not at all, and reports per stream
// appended the groups' reads of the log (reads/stream, all groups) and
// the reads and waits that reached the backend (backend-reads/stream,
// backend-waits/stream: on a database each is a statement).
func BenchmarkConsumersKeepingUp(b *testing.B) {
	for _, pause := range []time.Duration{0, 200 * time.Microsecond, time.Millisecond} {
		b.Run(fmt.Sprint("pause=", pause), func(b *testing.B) { benchmarkConsumers(b, pause) })
	}
}

func benchmarkConsumers(b *testing.B, pause time.Duration) {
	const groups, writers = 4, 8
	mem := eventstore.NewMemory().Backend()
	cb := &countingBackend{Backend: mem, waiter: mem.(eventstore.LogWaiter)}
	st, err := eventstore.New(cb, eventstore.Config{})
	if err != nil {
		b.Fatal(err)
	}
	log := &countingLog{Store: st}
	var handled atomic.Int64
	ctx, cancel := context.WithCancel(context.Background())
	var running sync.WaitGroup
	for g := range groups {
		p := event.MustProcessor("shop", fmt.Sprint("group_", g), factum.StageProjected,
			event.On(func(ctx context.Context, m event.Message, e ItemAdded) error { handled.Add(1); return nil }))
		c, err := event.NewConsumer(p, event.Config{Log: log, Checkpoints: event.NewMemoryCheckpoints()})
		if err != nil {
			b.Fatal(err)
		}
		running.Go(func() { _ = c.Run(ctx) })
	}
	defer func() { cancel(); running.Wait() }()
	// Let the groups reach the log's end and wait there.
	for log.waits.Load() < groups {
		time.Sleep(time.Millisecond)
	}
	reads0, breads0, bwaits0, ready0 := log.reads.Load(), cb.reads.Load(), cb.waits.Load(), cb.ready.Load()
	b.ResetTimer()
	var next atomic.Int64
	var writing sync.WaitGroup
	for w := range writers {
		writing.Go(func() {
			for v := 1; next.Add(1) <= int64(b.N); v++ {
				s := &factum.EventStream{
					ID: factum.NewID(), AggregateID: carts.WithID(fmt.Sprint("w", w)), Version: v,
					CommandID: factum.NewID(), RequestID: factum.NewID(), CreateTime: time.Now(),
					Events: []factum.DomainEvent{{ID: factum.NewID(), Name: "item_added", Sequence: 1, IsLast: true, Body: []byte(`{"sku":"s"}`)}},
				}
				if err := st.Append(context.Background(), s); err != nil {
					b.Error(err)
					return
				}
				if pause > 0 {
					time.Sleep(pause)
				}
			}
		})
	}
	writing.Wait()
	for handled.Load() < int64(groups*b.N) {
		time.Sleep(100 * time.Microsecond)
	}
	b.StopTimer()
	n := float64(b.N)
	b.ReportMetric(float64(log.reads.Load()-reads0)/n, "reads/stream")
	b.ReportMetric(float64(cb.reads.Load()-breads0)/n, "backend-reads/stream")
	b.ReportMetric(float64(cb.waits.Load()-bwaits0)/n, "backend-waits/stream")
	b.ReportMetric(float64(cb.ready.Load()-ready0)/n, "backend-waits-ready/stream")
}
