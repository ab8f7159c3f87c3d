package sqlstoretest

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/eventstore"
	"github.com/factum-go/factum/internal/storebench"
	"github.com/factum-go/factum/snapshot"
)

var benchBody = []byte(`{"sku":"sku-1","qty":2}`)

// BenchStream is the benchmarks' stream: one small event, the shape the
// append scripts give pgbench's row.
func BenchStream(id factum.AggregateID, version int) *factum.EventStream {
	v := strconv.Itoa(version)
	return &factum.EventStream{
		ID: factum.NewID(), AggregateID: id, Version: version,
		CommandID: factum.NewID(), RequestID: "r-" + v, CreateTime: time.Now(),
		Events: []factum.DomainEvent{{ID: factum.NewID(), Name: "item_added", Sequence: 1, IsLast: true, Body: benchBody}},
	}
}

// BenchAppend appends b.N streams from writers concurrent callers, each to
// aggregates of its own (ten versions each, then a new aggregate), and
// reports streams/s and the client's CPU.
func BenchAppend(b *testing.B, st eventstore.Store, writers int) {
	named := factum.NamedAggregate{Context: "bench", Aggregate: "cart"}
	ctx := context.Background()
	var next, remaining atomic.Int64
	remaining.Store(int64(b.N))
	b.ReportAllocs()
	b.ResetTimer()
	start, cpu := time.Now(), storebench.CPU()
	var wg sync.WaitGroup
	for range writers {
		wg.Go(func() {
			var id factum.AggregateID
			v := 10
			for remaining.Add(-1) >= 0 {
				if v == 10 {
					id, v = named.WithID(fmt.Sprintf("agg-%d", next.Add(1))), 0
				}
				v++
				if err := st.Append(ctx, BenchStream(id, v)); err != nil {
					b.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "streams/s")
	storebench.ReportCPU(b, cpu) // the client's share; a server's is not included
}

// BenchLoad10000 loads an aggregate of 10,000 streams from st, an empty
// store of the context "bench".
func BenchLoad10000(b *testing.B, st eventstore.Store) {
	id := factum.NamedAggregate{Context: "bench", Aggregate: "cart"}.WithID("big")
	ctx := context.Background()
	for v := 1; v <= 10_000; v++ {
		if err := st.Append(ctx, BenchStream(id, v)); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		got, err := st.Load(ctx, id, 1, eventstore.MaxVersion)
		if err != nil || len(got) != 10_000 {
			b.Fatal(len(got), err)
		}
	}
}

// BenchReadLog reads a log of 10,000 streams from the start, in pages of
// 1,000, from st, an empty store of the context "bench".
func BenchReadLog(b *testing.B, st eventstore.Store) {
	named := factum.NamedAggregate{Context: "bench", Aggregate: "cart"}
	ctx := context.Background()
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Go(func() {
			for i := range 1250 {
				if err := st.Append(ctx, BenchStream(named.WithID(fmt.Sprintf("a-%d-%d", w, i)), 1)); err != nil {
					b.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		var pos factum.Position
		n := 0
		for {
			page, err := st.ReadLog(ctx, pos, 1000)
			if err != nil {
				b.Fatal(err)
			}
			if len(page) == 0 {
				break
			}
			n += len(page)
			pos = page[len(page)-1].Position
		}
		if n != 10_000 {
			b.Fatalf("read %d streams, want 10000", n)
		}
	}
}

// BenchSnapshotSave runs storebench.SnapshotSave on fresh databases of
// open.
func BenchSnapshotSave(b *testing.B, open func(testing.TB) Stores) {
	storebench.SnapshotSave(b, func(b *testing.B) snapshot.Store { return Must(open(b).Snapshots("shop"))(b) })
}

// BenchSnapshotList10k runs storebench.SnapshotList10k on a fresh database
// of open; index holds the statements that create the documented index on
// state.status and gather statistics.
func BenchSnapshotList10k(b *testing.B, open func(testing.TB) Stores, index ...string) {
	stores := open(b)
	storebench.SnapshotList10k(b, Must(stores.Snapshots("shop"))(b), func(b *testing.B) {
		for _, ddl := range index {
			if err := stores.Exec(context.Background(), ddl); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchLoadAggregate10000 runs storebench.LoadAggregate10000 on a fresh
// database of open.
func BenchLoadAggregate10000(b *testing.B, open func(testing.TB) Stores) {
	stores := open(b)
	storebench.LoadAggregate10000(b, Closed(stores.Events("shop", false))(b), Must(stores.Snapshots("shop"))(b))
}
