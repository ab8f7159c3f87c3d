// Package storebench holds the benchmark bodies that the SQL adapters'
// benchmarks share, so that SQLite and PostgreSQL are measured by the same
// code: snapshot saves and list queries over realistic orders, and loading
// an aggregate of 10,000 streams with and without a snapshot. Each figure
// also reports cpu-ns/op, the steadier number on a shared machine.
package storebench

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
	"github.com/factum-go/factum/aggregate"
	"github.com/factum-go/factum/codec"
	"github.com/factum-go/factum/eventstore"
	"github.com/factum-go/factum/examples/cart"
	"github.com/factum-go/factum/query"
	"github.com/factum-go/factum/snapshot"
)

// Orders is the aggregate type of the orders the snapshot benchmarks save.
var Orders = factum.NamedAggregate{Context: "shop", Aggregate: "order"}

// CPU is the CPU time (user and system, all threads) the test process
// has used. The machine is shared, so wall-clock ns/op swings with other
// people's load; CPU time per operation is the steadier figure (for
// PostgreSQL it leaves out the server's share).
func CPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// ReportCPU adds the cpu-ns/op metric for the CPU time used since start.
func ReportCPU(b *testing.B, start time.Duration) {
	if b.N > 0 {
		b.ReportMetric(float64(CPU()-start)/float64(b.N), "cpu-ns/op")
	}
}

// Order is a snapshot of an order of a realistic size: what every
// snapshot store's benchmarks save (snapshot/bench_test.go for memory).
func Order(i, version int) snapshot.Snapshot {
	statuses := []string{"open", "paid", "shipped", "cancelled"}
	customers := []string{"alice", "bob", "carol", "dave", "erin", "frank", "grace"}
	state := fmt.Sprintf(`{"status":%q,"total":%d,"customer":%q,"lines":[{"sku":"sku-%d","qty":%d}],"address":{"city":"Paris","zip":"75001"}}`,
		statuses[i%len(statuses)], (i*7919)%1000, customers[(i/3)%len(customers)], i%97, 1+i%5)
	at := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC).Add(time.Duration(i) * time.Minute)
	return snapshot.Snapshot{
		AggregateID:   Orders.WithID(fmt.Sprintf("order-%06d", i)).WithTenant("t1"),
		OwnerID:       customers[i%len(customers)],
		Version:       version,
		EventID:       factum.NewID(),
		FirstOperator: "u1", Operator: "u1",
		FirstEventTime: at, EventTime: at, SnapshotTime: at,
		Deleted: i%50 == 0,
		State:   json.RawMessage(state),
	}
}

// FillOrders saves version 1 of n orders from 16 goroutines.
func FillOrders(b *testing.B, st snapshot.Store, n int) {
	b.Helper()
	var next atomic.Int64
	var wg sync.WaitGroup
	for range 16 {
		wg.Go(func() {
			for i := int(next.Add(1)) - 1; i < n; i = int(next.Add(1)) - 1 {
				if _, err := st.Save(context.Background(), Order(i, 1)); err != nil {
					b.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
}

// SnapshotSave saves new versions of 10,000 stored orders in turn, from
// one goroutine and from 16, each sub-benchmark on a store newStore makes.
func SnapshotSave(b *testing.B, newStore func(b *testing.B) snapshot.Store) {
	for _, goroutines := range []int{1, 16} {
		b.Run(fmt.Sprintf("goroutines=%d", goroutines), func(b *testing.B) {
			st := newStore(b)
			const n = 10_000
			FillOrders(b, st, n)
			snaps := make([]snapshot.Snapshot, n)
			for i := range snaps {
				snaps[i] = Order(i, 1)
			}
			var next atomic.Int64
			b.ReportAllocs()
			b.ResetTimer()
			start, cpu := time.Now(), CPU()
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
			ReportCPU(b, cpu)
		})
	}
}

// SnapshotList10k runs the memory store's list query
// (snapshot.BenchmarkQueryServiceList10k) over 10,000 snapshots: AND of
// EQ, GT and CONTAINS on state fields (about 1,600 match), sorted by a
// number descending, first 20, as typed snapshots; first without an index
// on state fields, then with the documented index on state.status (a
// quarter of the orders are open).
// index creates that index (and refreshes the planner's statistics).
func SnapshotList10k(b *testing.B, st snapshot.QueryStore, index func(b *testing.B)) {
	svc := FillList10k(b, st)
	run := func(b *testing.B) { List10k(b, svc) }
	b.Run("no_index", run)
	index(b)
	b.Run("status_index", run)
}

// list10k is SnapshotList10k's query.
var list10k = query.Query{
	Condition: query.And(
		query.Eq("state.status", "open"),
		query.Gt("state.total", 100),
		query.Contains("state.customer", "a"),
	),
	Sort:  []query.Sort{query.SortDesc("state.total")},
	Limit: 20,
}

// FillList10k saves SnapshotList10k's 10,000 orders in st and returns the
// query service of st that List10k runs the list query on.
func FillList10k(b *testing.B, st snapshot.QueryStore) *snapshot.QueryService {
	b.Helper()
	FillOrders(b, st, 10_000)
	svc, err := snapshot.NewQueryService(st, Orders, query.Planner{})
	if err != nil {
		b.Fatal(err)
	}
	return svc
}

// List10k runs SnapshotList10k's list query on svc (over FillList10k's
// orders) as the benchmark's loop, after checking that it answers the
// first 20, reporting the allocations and the CPU time per query.
func List10k(b *testing.B, svc *snapshot.QueryService) {
	b.Helper()
	ctx := context.Background()
	if list, err := svc.List(ctx, list10k); err != nil || len(list) != 20 {
		b.Fatalf("List: %d, %v", len(list), err)
	}
	b.ReportAllocs()
	cpu := CPU()
	for b.Loop() {
		if _, err := svc.List(ctx, list10k); err != nil {
			b.Fatal(err)
		}
	}
	ReportCPU(b, cpu)
}

// loadPage is the aggregate processor's page of streams.
const loadPage = 1024

// loadCart rebuilds a cart as the aggregate processor does on a cache
// miss: the snapshot's state, if snaps is set and has one, then the
// streams after it in pages, each decoded and applied.
func loadCart(ctx context.Context, def *aggregate.Definition[cart.Cart], reg *codec.Registry, events eventstore.Store,
	snaps snapshot.Store, id factum.AggregateID) (aggregate.State[cart.Cart], error) {
	st := aggregate.State[cart.Cart]{ID: id, Value: def.NewState()}
	if snaps != nil {
		snap, err := snaps.Load(ctx, id)
		if err != nil {
			return st, err
		}
		if st, err = def.FromStored(aggregate.StoredState{ID: snap.AggregateID, Version: snap.Version, OwnerID: snap.OwnerID,
			Deleted: snap.Deleted, EventTime: snap.EventTime, State: snap.State}); err != nil {
			return st, err
		}
	}
	for {
		streams, err := events.Load(ctx, id, st.Version+1, st.Version+loadPage)
		if err != nil {
			return st, err
		}
		for i := range streams {
			if err := def.Source(reg, &st, &streams[i]); err != nil {
				return st, err
			}
		}
		if len(streams) < loadPage {
			return st, nil
		}
	}
}

// LoadAggregate10000 appends 10,000 streams of one cart (one item_added event
// each), saves its snapshot at the last version, and measures loadCart
// without and with the snapshot.
func LoadAggregate10000(b *testing.B, events eventstore.Store, snaps snapshot.Store) {
	ctx := context.Background()
	def := cart.New(cart.Items{}, cart.DefaultLimits)
	reg := codec.NewRegistry()
	if err := def.Register(reg); err != nil {
		b.Fatal(err)
	}
	id := def.ID("big")
	const n = 10_000
	for v := 1; v <= n; v++ {
		body, _ := json.Marshal(cart.ItemAdded{SKU: fmt.Sprintf("sku-%d", v%20), Qty: 1})
		err := events.Append(ctx, &factum.EventStream{
			ID: factum.NewID(), AggregateID: id, Version: v, CommandID: factum.NewID(), RequestID: fmt.Sprintf("r-%d", v),
			CreateTime: time.Now(), OwnerID: "u1",
			Events: []factum.DomainEvent{{ID: factum.NewID(), Name: "item_added", Sequence: 1, IsLast: true, Body: body}},
		})
		if err != nil {
			b.Fatal(err)
		}
	}
	full, err := loadCart(ctx, def, reg, events, nil, id)
	if err != nil || full.Version != n {
		b.Fatalf("load: v%d, %v", full.Version, err)
	}
	stored, err := def.ToStored(full)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := snaps.Save(ctx, snapshot.Snapshot{AggregateID: stored.ID, OwnerID: stored.OwnerID, Version: stored.Version,
		EventTime: stored.EventTime, State: stored.State}); err != nil {
		b.Fatal(err)
	}
	for _, c := range []struct {
		name  string
		snaps snapshot.Store
	}{{"without_snapshot", nil}, {"with_snapshot", snaps}} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			cpu := CPU()
			for b.Loop() {
				st, err := loadCart(ctx, def, reg, events, c.snaps, id)
				if err != nil || st.Version != n || st.Value.Items["sku-1"] != n/20 {
					b.Fatalf("load: v%d %v, %v", st.Version, st.Value.Items, err)
				}
			}
			ReportCPU(b, cpu)
		})
	}
}
