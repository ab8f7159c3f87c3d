package projection_test

import (
	"context"
	"encoding/json"
	"fmt"
	"syscall"
	"testing"
	"time"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/eventstore"
	"github.com/factum-go/factum/postgres"
	"github.com/factum-go/factum/projection"
	"github.com/factum-go/factum/sqlite"
)

// unwantedLogStreams is the log BenchmarkRunnerMostlyUnwanted projects.
const unwantedLogStreams = 4096

// BenchmarkRunnerMostlyUnwanted measures a runner over a log of which it
// consumes one stream in a hundred (the rest are other aggregates'), as a
// projection of one aggregate type sees a service's log: each iteration
// projects the whole memory log from the start into an SQLite (FULL
// synchronous, as serve opens it) or PostgreSQL read model, with batches
// of 4 streams (a runner keeping up with appends reads a few at a time)
// and of 64. streams/s is the figure, cpu-µs/kstream the process's CPU per
// thousand streams; the reset before each run is off the clock.
func BenchmarkRunnerMostlyUnwanted(b *testing.B) {
	benchCarts := factum.NamedAggregate{Context: "shop", Aggregate: "cart"}
	benchNotes := factum.NamedAggregate{Context: "shop", Aggregate: "note"}
	log := eventstore.NewMemory()
	versions := map[factum.AggregateID]int{}
	for i := range unwantedLogStreams {
		id, ev := benchNotes.WithID(fmt.Sprintf("n-%d", i%97)), "note_written"
		if i%100 == 50 {
			id, ev = benchCarts.WithID(fmt.Sprintf("c-%d", i%7)), "item_added"
		}
		versions[id]++
		s := factum.EventStream{ID: factum.NewID(), AggregateID: id, Version: versions[id], CommandID: factum.NewID(),
			RequestID: factum.NewID(), CreateTime: time.Now(),
			Events: []factum.DomainEvent{{ID: factum.NewID(), Name: ev, Sequence: 1, IsLast: true, Body: json.RawMessage(`{}`)}}}
		if err := log.Append(context.Background(), &s); err != nil {
			b.Fatal(err)
		}
	}
	stores := []struct {
		name string
		open func(b *testing.B) projection.Store
	}{
		{"sqlite", func(b *testing.B) projection.Store {
			_, ps := openSQLiteWith(b, sqlite.Options{})
			return ps
		}},
		{"postgres", func(b *testing.B) projection.Store {
			_, ps := openPostgresWith(b, postgres.Options{MaxConns: 4})
			return ps
		}},
	}
	for _, st := range stores {
		b.Run(st.name, func(b *testing.B) {
			ps := st.open(b)
			for _, batch := range []int{4, 64} {
				b.Run(fmt.Sprintf("batch=%d", batch), func(b *testing.B) {
					p, err := projection.New("shop", "bench_items",
						func(ctx context.Context, tx projection.Tx, s *factum.EventStream) error {
							_, err := tx.Exec(ctx, `INSERT INTO bench_items (cart, items) VALUES ($1, 1)
								ON CONFLICT (cart) DO UPDATE SET items = bench_items.items + 1`, s.AggregateID.ID)
							return err
						},
						projection.From(benchCarts),
						projection.Setup(func(ctx context.Context, tx projection.Tx) error {
							_, err := tx.Exec(ctx, `CREATE TABLE IF NOT EXISTS bench_items (cart TEXT PRIMARY KEY, items INTEGER NOT NULL)`)
							return err
						}),
						projection.Reset(func(ctx context.Context, tx projection.Tx) error {
							_, err := tx.Exec(ctx, `DELETE FROM bench_items`)
							return err
						}),
					)
					if err != nil {
						b.Fatal(err)
					}
					r, err := projection.NewRunner(p, projection.Config{Log: log, Store: ps, BatchSize: batch})
					if err != nil {
						b.Fatal(err)
					}
					r.Drain() // each Run returns once the log is projected
					ctx := context.Background()
					var elapsed, cpu time.Duration
					for b.Loop() {
						b.StopTimer()
						if err := r.ResetAndReplay(ctx); err != nil {
							b.Fatal(err)
						}
						b.StartTimer()
						start, cpu0 := time.Now(), processCPU()
						if err := r.Run(ctx); err != nil {
							b.Fatal(err)
						}
						elapsed += time.Since(start)
						cpu += processCPU() - cpu0
					}
					st, err := r.Status(ctx)
					if err != nil || st.Live == nil || st.Live.Lag != 0 {
						b.Fatalf("after the runs the projection is at %+v (%v)", st.Live, err)
					}
					streams := float64(unwantedLogStreams * b.N)
					b.ReportMetric(streams/elapsed.Seconds(), "streams/s")
					b.ReportMetric(float64(cpu.Microseconds())/streams*1000, "cpu-µs/kstream")
				})
			}
		})
	}
}

// processCPU is the process's user and system CPU time so far.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
