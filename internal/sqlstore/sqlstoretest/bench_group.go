package sqlstoretest

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/eventstore"
	"github.com/factum-go/factum/internal/built"
)

// BenchAppendRuns appends b.N runs of run streams of one aggregate, from
// writers concurrent callers, each to an aggregate of its own: a run is
// one group (AppendBuiltGroup) with group set, else run Appends one after
// another. It reports streams/s and, per stream, the commits counts,
// which st's backend reports from its own counters (the transactions it
// committed, or statements it ran in autocommit mode).
func BenchAppendRuns(b *testing.B, st eventstore.Store, writers, run int, group bool, commits func() int64) {
	g := built.GroupOf(st)
	if group && g == nil {
		b.Fatal("the store does not append groups")
	}
	named := factum.NamedAggregate{Context: "bench", Aggregate: "cart"}
	ctx := context.Background()
	var next, remaining atomic.Int64
	remaining.Store(int64(b.N))
	before := commits()
	b.ReportAllocs()
	b.ResetTimer()
	start := time.Now()
	var wg sync.WaitGroup
	for range writers {
		wg.Go(func() {
			id, v := named.WithID(fmt.Sprintf("agg-%d", next.Add(1))), 0
			ss := make([]built.Stream, run)
			for remaining.Add(-1) >= 0 {
				for i := range ss {
					ss[i] = built.Mark(BenchStream(id, v+1+i))
				}
				v += run
				if group {
					if err := g.AppendBuiltGroup(ctx, ss); err != nil {
						b.Error(err)
						return
					}
					continue
				}
				for _, s := range ss {
					if err := st.Append(ctx, s.Stream()); err != nil {
						b.Error(err)
						return
					}
				}
			}
		})
	}
	wg.Wait()
	streams := float64(b.N * run)
	b.ReportMetric(streams/time.Since(start).Seconds(), "streams/s")
	b.ReportMetric(float64(commits()-before)/streams, "commits/stream")
}
