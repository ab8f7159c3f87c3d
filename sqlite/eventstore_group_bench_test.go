package sqlite

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/internal/built"
	"github.com/factum-go/factum/internal/sqlstore/sqlstoretest"
)

// benchGroup is how many streams of one aggregate BenchmarkAppendGroup
// appends at a time.
const benchGroup = 8

// BenchmarkAppendGroup appends runs of benchGroup streams of one
// aggregate, with durable commits (synchronous=FULL, as serve runs), as
// one group (AppendBuiltGroup) or as benchGroup Appends one after
// another, from one writer and from 8 writers at once, each to aggregates
// of its own. One op is one run; streams/s counts streams, and
// commits/stream the transactions that committed them (one fsync of the
// WAL each).
func BenchmarkAppendGroup(b *testing.B) {
	for _, writers := range []int{1, 8} {
		for _, mode := range []string{"sequential", "group"} {
			b.Run(fmt.Sprintf("%s/aggregates=%d", mode, writers), func(b *testing.B) {
				st := newTestEventStore(b, newTestDB(b, Options{}), "bench", EventStoreOptions{})
				g := built.GroupOf(st)
				named := factum.NamedAggregate{Context: "bench", Aggregate: "cart"}
				ctx := context.Background()
				var next, remaining atomic.Int64
				remaining.Store(int64(b.N))
				commits := func() int64 {
					st.db.batch.mu.Lock()
					defer st.db.batch.mu.Unlock()
					return int64(st.db.batch.batches) + st.autocommits.Load()
				}
				before := commits()
				b.ReportAllocs()
				b.ResetTimer()
				start := time.Now()
				var wg sync.WaitGroup
				for range writers {
					wg.Go(func() {
						id, v := named.WithID(fmt.Sprintf("agg-%d", next.Add(1))), 0
						run := make([]built.Stream, benchGroup)
						for remaining.Add(-1) >= 0 {
							for i := range run {
								run[i] = built.Mark(sqlstoretest.BenchStream(id, v+1+i))
							}
							v += benchGroup
							if mode == "group" {
								if err := g.AppendBuiltGroup(ctx, run); err != nil {
									b.Error(err)
									return
								}
								continue
							}
							for _, s := range run {
								if err := st.Append(ctx, s.Stream()); err != nil {
									b.Error(err)
									return
								}
							}
						}
					})
				}
				wg.Wait()
				streams := float64(b.N * benchGroup)
				b.ReportMetric(streams/time.Since(start).Seconds(), "streams/s")
				b.ReportMetric(float64(commits()-before)/streams, "commits/stream")
			})
		}
	}
}
