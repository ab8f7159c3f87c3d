package snapshot_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/query"
	"github.com/factum-go/factum/snapshot"
)

var orders = factum.NamedAggregate{Context: "shop", Aggregate: "order"}

// orderSnapshot is a snapshot of an order aggregate of a realistic size.
func orderSnapshot(i, version int) snapshot.Snapshot {
	statuses := []string{"open", "paid", "shipped", "cancelled"}
	customers := []string{"alice", "bob", "carol", "dave", "erin", "frank", "grace"}
	state := fmt.Sprintf(`{"status":%q,"total":%d,"customer":%q,"lines":[{"sku":"sku-%d","qty":%d}],"address":{"city":"Paris","zip":"75001"}}`,
		statuses[i%len(statuses)], (i*7919)%1000, customers[(i/3)%len(customers)], i%97, 1+i%5)
	at := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC).Add(time.Duration(i) * time.Minute)
	return snapshot.Snapshot{
		AggregateID:   orders.WithID(fmt.Sprintf("order-%06d", i)).WithTenant("t1"),
		OwnerID:       customers[i%len(customers)],
		Version:       version,
		EventID:       factum.NewID(),
		FirstOperator: "u1", Operator: "u1",
		FirstEventTime: at, EventTime: at, SnapshotTime: at,
		Deleted: i%50 == 0,
		State:   json.RawMessage(state),
	}
}

// BenchmarkQueryServiceList10k: a list query over 10,000 snapshots in the
// memory store, AND of EQ, GT and CONTAINS (about 1,600 match), sorted by
// a number descending, first 20, returned as typed snapshots.
func BenchmarkQueryServiceList10k(b *testing.B) {
	ctx := context.Background()
	store := snapshot.NewMemory()
	for i := range 10_000 {
		if _, err := store.Save(ctx, orderSnapshot(i, 1)); err != nil {
			b.Fatal(err)
		}
	}
	svc, err := snapshot.NewQueryService(store, orders, query.Planner{})
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
	if list, err := svc.List(ctx, q); err != nil || len(list) != 20 {
		b.Fatalf("List: %d, %v", len(list), err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := svc.List(ctx, q); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkMemorySave saves new versions of 10,000 aggregates in turn.
func BenchmarkMemorySave(b *testing.B) {
	ctx := context.Background()
	store := snapshot.NewMemory()
	snaps := make([]snapshot.Snapshot, 10_000)
	for i := range snaps {
		snaps[i] = orderSnapshot(i, 1)
	}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		s := snaps[i%len(snaps)]
		s.Version = 1 + i/len(snaps)
		if _, err := store.Save(ctx, s); err != nil {
			b.Fatal(err)
		}
		i++
	}
}

// BenchmarkMemoryLoad loads snapshots of 10,000 aggregates in turn.
func BenchmarkMemoryLoad(b *testing.B) {
	ctx := context.Background()
	store := snapshot.NewMemory()
	ids := make([]factum.AggregateID, 10_000)
	for i := range ids {
		s := orderSnapshot(i, 1)
		ids[i] = s.AggregateID
		if _, err := store.Save(ctx, s); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		if _, err := store.Load(ctx, ids[i%len(ids)]); err != nil {
			b.Fatal(err)
		}
		i++
	}
}
