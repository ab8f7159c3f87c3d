package postgres_test

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/postgres"
	"github.com/factum-go/factum/query"
	"github.com/factum-go/factum/snapshot"
)

var benchOrders = factum.NamedAggregate{Context: "shop", Aggregate: "order"}

// benchCPU is the CPU time (user and system, all threads) the test process
// has used. The machine is shared, so wall-clock ns/op swings with other
// people's load; CPU time per operation is the steadier figure (for
// PostgreSQL it leaves out the server's share).
func benchCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// reportCPU adds the cpu-ns/op metric for the CPU time used since start.
func reportCPU(b *testing.B, start time.Duration) {
	if b.N > 0 {
		b.ReportMetric(float64(benchCPU()-start)/float64(b.N), "cpu-ns/op")
	}
}

// benchOrder is a snapshot of an order of a realistic size, the shape of
// the memory store's benchmarks (snapshot/bench_test.go).
func benchOrder(i, version int) snapshot.Snapshot {
	statuses := []string{"open", "paid", "shipped", "cancelled"}
	customers := []string{"alice", "bob", "carol", "dave", "erin", "frank", "grace"}
	state := fmt.Sprintf(`{"status":%q,"total":%d,"customer":%q,"lines":[{"sku":"sku-%d","qty":%d}],"address":{"city":"Paris","zip":"75001"}}`,
		statuses[i%len(statuses)], (i*7919)%1000, customers[(i/3)%len(customers)], i%97, 1+i%5)
	at := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC).Add(time.Duration(i) * time.Minute)
	return snapshot.Snapshot{
		AggregateID:   benchOrders.WithID(fmt.Sprintf("order-%06d", i)).WithTenant("t1"),
		OwnerID:       customers[i%len(customers)],
		Version:       version,
		EventID:       factum.NewID(),
		FirstOperator: "u1", Operator: "u1",
		FirstEventTime: at, EventTime: at, SnapshotTime: at,
		Deleted: i%50 == 0,
		State:   json.RawMessage(state),
	}
}

// fillOrders saves version 1 of n orders from 16 goroutines.
func fillOrders(b *testing.B, st snapshot.Store, n int) {
	b.Helper()
	var next atomic.Int64
	var wg sync.WaitGroup
	for range 16 {
		wg.Go(func() {
			for i := int(next.Add(1)) - 1; i < n; i = int(next.Add(1)) - 1 {
				if _, err := st.Save(context.Background(), benchOrder(i, 1)); err != nil {
					b.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
}

// BenchmarkSnapshotSave saves new versions of 10,000 stored orders in
// turn (the version-guarded upsert, one statement and durable commit
// each), from one goroutine and from 16.
func BenchmarkSnapshotSave(b *testing.B) {
	for _, goroutines := range []int{1, 16} {
		b.Run(fmt.Sprintf("goroutines=%d", goroutines), func(b *testing.B) {
			st := newSnapshotStore(b, openSnapshotDB(b), "shop")
			const n = 10_000
			fillOrders(b, st, n)
			snaps := make([]snapshot.Snapshot, n)
			for i := range snaps {
				snaps[i] = benchOrder(i, 1)
			}
			var next atomic.Int64
			b.ReportAllocs()
			b.ResetTimer()
			start, cpu := time.Now(), benchCPU()
			var wg sync.WaitGroup
			var remaining atomic.Int64
			remaining.Store(int64(b.N))
			for range goroutines {
				wg.Go(func() {
					for remaining.Add(-1) >= 0 {
						i := int(next.Add(1) - 1)
						s := snaps[i%n]
						s.Version = 2 + i/n
						if saved, err := st.Save(context.Background(), s); err != nil || !saved {
							b.Error(saved, err)
							return
						}
					}
				})
			}
			wg.Wait()
			b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "saves/s")
			reportCPU(b, cpu)
		})
	}
}

// BenchmarkSnapshotList10k runs the memory store's list query
// (snapshot.BenchmarkQueryServiceList10k) over 10,000 snapshots: AND of
// EQ, GT and CONTAINS on state fields (about 1,600 match), sorted by a
// number descending, first 20, as typed snapshots; first without an index
// on state fields, then with the documented index on state.status (a
// quarter of the orders are open).
func BenchmarkSnapshotList10k(b *testing.B) {
	ctx := context.Background()
	db := openSnapshotDB(b)
	st := newSnapshotStore(b, db, "shop")
	fillOrders(b, st, 10_000)
	svc, err := snapshot.NewQueryService(st, benchOrders, query.Planner{})
	if err != nil {
		b.Fatal(err)
	}
	q := query.Query{
		Condition: query.And(
			query.Eq("state.status", "open"),
			query.Gt("state.total", 100),
			query.Contains("state.customer", "a"),
		),
		Sort:  []query.Sort{query.SortDesc("state.total")},
		Limit: 20,
	}
	run := func(b *testing.B) {
		if list, err := svc.List(ctx, q); err != nil || len(list) != 20 {
			b.Fatalf("List: %d, %v", len(list), err)
		}
		b.ReportAllocs()
		cpu := benchCPU()
		for b.Loop() {
			if _, err := svc.List(ctx, q); err != nil {
				b.Fatal(err)
			}
		}
		reportCPU(b, cpu)
	}
	b.Run("no_index", run)
	for _, ddl := range []string{`CREATE INDEX factum_shop_snapshots_status ON factum_shop_snapshots (aggregate,
		  (CASE WHEN jsonb_typeof(state -> 'status') = 'string' THEN state -> 'status' #>> '{}' END))`, "ANALYZE factum_shop_snapshots"} {
		if _, err := db.Pool().Exec(ctx, ddl); err != nil {
			b.Fatal(err)
		}
	}
	b.Run("status_index", run)
}

// BenchmarkLoadAggregate10000 rebuilds a cart of 10,000 streams the way
// the aggregate processor loads one it has not cached: from version 1, or
// from its snapshot (at version 10,000) and the streams after it, each
// decoded and applied (see loadCart).
func BenchmarkLoadAggregate10000(b *testing.B) {
	ctx := context.Background()
	db := openSnapshotDB(b)
	events, err := postgres.NewEventStore(ctx, db, "shop", postgres.EventStoreOptions{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { events.Close() })
	benchLoad(b, events, newSnapshotStore(b, db, "shop"))
}
