package event_test

import (
	"context"
	"fmt"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/event"
	"github.com/factum-go/factum/eventstore"
	"github.com/factum-go/factum/sqlite"
)

// countingBackend counts the reads of the log and the waits that reach an
// event store's backend, under a front end that treats it as a database's
// (its tail and shared waits on). looks counts the waits that began with
// no stream of the store's own appends after their position, which a
// database backend answers by a look at its table (SQLite's WaitLog knows
// its own last append; every other case is a statement).
type countingBackend struct {
	eventstore.Backend
	waiter              eventstore.LogWaiter
	reads, waits, looks atomic.Int64

	mu   sync.Mutex
	last factum.Position // the last position appended
}

func (b *countingBackend) Append(ctx context.Context, s *factum.EventStream) (eventstore.Outcome, error) {
	o, err := b.Backend.Append(ctx, s)
	if err == nil && o == eventstore.Appended {
		b.mu.Lock()
		if b.last.Less(s.Position) {
			b.last = s.Position
		}
		b.mu.Unlock()
	}
	return o, err
}

func (b *countingBackend) ReadLog(ctx context.Context, after factum.Position, limit int) ([]factum.EventStream, error) {
	b.reads.Add(1)
	return b.Backend.ReadLog(ctx, after, limit)
}

func (b *countingBackend) WaitLog(ctx context.Context, after factum.Position, woken <-chan struct{}) error {
	b.waits.Add(1)
	b.mu.Lock()
	own := after.Less(b.last)
	b.mu.Unlock()
	if !own {
		b.looks.Add(1)
	}
	return b.waiter.WaitLog(ctx, after, woken)
}

// BenchmarkConsumersKeepingUp runs four consumer groups over a log that
// eight writers append one-stream commands to, each pausing between its
// appends (a command's round trip) or not at all, and reports per stream
// appended the groups' reads of the log (reads/stream, all groups), and
// the reads and waits that reached the backend (backend-reads/stream,
// backend-waits/stream) with the waits that looked at the log
// (backend-looks/stream): on SQLite each backend read and each look is a
// read of the table. The backend is the memory store's, under a front end
// as a database's is, or SQLite's.
func BenchmarkConsumersKeepingUp(b *testing.B) {
	for _, store := range []string{"memory", "sqlite"} {
		for _, pause := range []time.Duration{0, 200 * time.Microsecond, time.Millisecond} {
			b.Run(fmt.Sprintf("%s/pause=%s", store, pause), func(b *testing.B) {
				var backend eventstore.Backend
				if store == "sqlite" {
					ctx := context.Background()
					db, err := sqlite.Open(ctx, filepath.Join(b.TempDir(), "bench.db"), sqlite.Options{Synchronous: "NORMAL"})
					if err != nil {
						b.Fatal(err)
					}
					b.Cleanup(func() { _ = db.Close() })
					es, err := sqlite.NewEventStore(ctx, db, "shop", sqlite.EventStoreOptions{})
					if err != nil {
						b.Fatal(err)
					}
					b.Cleanup(func() { _ = es.Close() })
					backend = es.Backend()
				} else {
					backend = eventstore.NewMemory().Backend()
				}
				benchmarkConsumers(b, backend, pause)
			})
		}
	}
}

func benchmarkConsumers(b *testing.B, backend eventstore.Backend, pause time.Duration) {
	const groups, writers = 4, 8
	cb := &countingBackend{Backend: backend, waiter: backend.(eventstore.LogWaiter)}
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
	reads0, breads0, bwaits0, looks0 := log.reads.Load(), cb.reads.Load(), cb.waits.Load(), cb.looks.Load()
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
	if b.Failed() {
		return // an append failed: the streams will never all be handled
	}
	for handled.Load() < int64(groups*b.N) {
		time.Sleep(100 * time.Microsecond)
	}
	b.StopTimer()
	n := float64(b.N)
	b.ReportMetric(float64(log.reads.Load()-reads0)/n, "reads/stream")
	b.ReportMetric(float64(cb.reads.Load()-breads0)/n, "backend-reads/stream")
	b.ReportMetric(float64(cb.waits.Load()-bwaits0)/n, "backend-waits/stream")
	b.ReportMetric(float64(cb.looks.Load()-looks0)/n, "backend-looks/stream")
}
