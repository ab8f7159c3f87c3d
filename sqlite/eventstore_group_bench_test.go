package sqlite

import (
	"fmt"
	"testing"

	"github.com/factum-go/factum/internal/sqlstore/sqlstoretest"
)

// BenchmarkAppendGroup appends runs of 8 streams of one aggregate, with
// durable commits (synchronous=FULL, as serve runs), as one group
// (AppendBuiltGroup) or as 8 Appends one after another, from one writer
// and from 8 writers at once, each to an aggregate of its own. One op is
// one run; commits/stream counts the transactions that committed the
// streams (one fsync of the WAL each): the DB's batcher's and the appends
// committed alone.
func BenchmarkAppendGroup(b *testing.B) {
	for _, writers := range []int{1, 8} {
		for _, mode := range []string{"sequential", "group"} {
			b.Run(fmt.Sprintf("%s/aggregates=%d", mode, writers), func(b *testing.B) {
				st := newTestEventStore(b, newTestDB(b, Options{}), "bench", EventStoreOptions{})
				sqlstoretest.BenchAppendRuns(b, st, writers, 8, mode == "group", func() int64 {
					st.db.batch.mu.Lock()
					defer st.db.batch.mu.Unlock()
					return int64(st.db.batch.batches) + st.autocommits.Load()
				})
			})
		}
	}
}
