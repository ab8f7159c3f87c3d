package postgres

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
)

var benchBody = []byte(`{"sku":"sku-1","qty":2}`)

// benchStream is the benchmarks' stream: one small event, the shape
// scripts/bench-append-pg.sh gives pgbench's row.
func benchStream(id factum.AggregateID, version int) *factum.EventStream {
	v := strconv.Itoa(version)
	return &factum.EventStream{
		ID: factum.NewID(), AggregateID: id, Version: version,
		CommandID: factum.NewID(), RequestID: "r-" + v, CreateTime: time.Now(),
		Events: []factum.DomainEvent{{ID: factum.NewID(), Name: "item_added", Sequence: 1, IsLast: true, Body: benchBody}},
	}
}

// BenchmarkAppend appends from 1, 8 and 32 concurrent writers, each to
// aggregates of its own (ten versions each, then a new aggregate), with
// coalescing off (one statement and commit per stream) and on. The
// streams/s metric is what scripts/bench-append-pg.sh compares with
// pgbench.
func BenchmarkAppend(b *testing.B) {
	for _, mode := range []struct {
		name string
		opts func(writers int) EventStoreOptions
	}{
		{"single", func(w int) EventStoreOptions { return EventStoreOptions{MaxBatch: 1, Writers: w} }},
		{"coalesced", func(w int) EventStoreOptions { return EventStoreOptions{} }},
	} {
		for _, writers := range []int{1, 8, 32} {
			b.Run(fmt.Sprintf("%s/writers=%d", mode.name, writers), func(b *testing.B) {
				db := newTestDB(b, int32(writers+4))
				st := newTestEventStore(b, db, "bench", mode.opts(writers))
				benchAppend(b, st, writers)
				b.ReportMetric(float64(st.stats.streams.Load())/float64(max(1, st.stats.batches.Load())), "streams/stmt")
			})
		}
	}
}

func benchAppend(b *testing.B, st eventstore.Store, writers int) {
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
				if err := st.Append(ctx, benchStream(id, v)); err != nil {
					b.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "streams/s")
	storebench.ReportCPU(b, cpu) // the client's share; the server's is not included
}

// BenchmarkAppendWriters appends from 32 concurrent callers with 1, 2, 4
// and 8 writers: fewer writers make bigger statements and fewer commits
// (EventStoreOptions.Writers).
func BenchmarkAppendWriters(b *testing.B) {
	for _, writers := range []int{1, 2, 4, 8} {
		b.Run(fmt.Sprintf("writers=%d", writers), func(b *testing.B) {
			db := newTestDB(b, 36)
			st := newTestEventStore(b, db, "bench", EventStoreOptions{Writers: writers})
			benchAppend(b, st, 32)
			b.ReportMetric(float64(st.stats.streams.Load())/float64(max(1, st.stats.batches.Load())), "streams/stmt")
		})
	}
}

// BenchmarkLoad10000 loads an aggregate of 10,000 streams.
func BenchmarkLoad10000(b *testing.B) {
	db := newTestDB(b, 8)
	st := newTestEventStore(b, db, "bench", EventStoreOptions{})
	id := factum.NamedAggregate{Context: "bench", Aggregate: "cart"}.WithID("big")
	ctx := context.Background()
	for v := 1; v <= 10_000; v++ {
		if err := st.Append(ctx, benchStream(id, v)); err != nil {
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

// BenchmarkReadLog reads a log of 10,000 streams from the start, in pages
// of 1,000.
func BenchmarkReadLog(b *testing.B) {
	db := newTestDB(b, 8)
	st := newTestEventStore(b, db, "bench", EventStoreOptions{})
	named := factum.NamedAggregate{Context: "bench", Aggregate: "cart"}
	ctx := context.Background()
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Go(func() {
			for i := range 1250 {
				if err := st.Append(ctx, benchStream(named.WithID(fmt.Sprintf("a-%d-%d", w, i)), 1)); err != nil {
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
