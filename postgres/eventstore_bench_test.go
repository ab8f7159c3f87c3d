package postgres

import (
	"fmt"
	"testing"

	"github.com/factum-go/factum/internal/sqlstore/sqlstoretest"
)

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
				sqlstoretest.BenchAppend(b, st, writers)
				b.ReportMetric(float64(st.stats.Streams.Load())/float64(max(1, st.stats.Batches.Load())), "streams/stmt")
			})
		}
	}
}

// BenchmarkAppendWriters appends from 32 concurrent callers with 1, 2, 4
// and 8 writers: fewer writers make bigger statements and fewer commits
// (EventStoreOptions.Writers).
func BenchmarkAppendWriters(b *testing.B) {
	for _, writers := range []int{1, 2, 4, 8} {
		b.Run(fmt.Sprintf("writers=%d", writers), func(b *testing.B) {
			db := newTestDB(b, 36)
			st := newTestEventStore(b, db, "bench", EventStoreOptions{Writers: writers})
			sqlstoretest.BenchAppend(b, st, 32)
			b.ReportMetric(float64(st.stats.Streams.Load())/float64(max(1, st.stats.Batches.Load())), "streams/stmt")
		})
	}
}

// BenchmarkLoad10000 loads an aggregate of 10,000 streams.
func BenchmarkLoad10000(b *testing.B) {
	sqlstoretest.BenchLoad10000(b, newTestEventStore(b, newTestDB(b, 8), "bench", EventStoreOptions{}))
}

// BenchmarkReadLog reads a log of 10,000 streams from the start, in pages
// of 1,000.
func BenchmarkReadLog(b *testing.B) {
	sqlstoretest.BenchReadLog(b, newTestEventStore(b, newTestDB(b, 8), "bench", EventStoreOptions{}))
}
