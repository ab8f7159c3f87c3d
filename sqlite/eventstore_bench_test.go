package sqlite

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/internal/sqlstore"
	"github.com/factum-go/factum/internal/sqlstore/sqlstoretest"
)

var benchWriters = []int{1, 8, 32}

// BenchmarkAppend appends from 1, 8 and 32 concurrent writers, each to
// aggregates of its own (ten versions each, then a new aggregate), with
// durable commits (synchronous=FULL), coalescing off (one transaction per
// stream) and on. scripts/bench-append-sqlite.sh compares its streams/s
// with BenchmarkRawInsert.
func BenchmarkAppend(b *testing.B) {
	for _, mode := range []struct {
		name     string
		maxBatch int
	}{{"single", 1}, {"coalesced", 0}} {
		for _, writers := range benchWriters {
			b.Run(fmt.Sprintf("%s/writers=%d", mode.name, writers), func(b *testing.B) {
				st := newTestEventStore(b, newTestDB(b, Options{}), "bench", EventStoreOptions{MaxBatch: mode.maxBatch})
				sqlstoretest.BenchAppend(b, st, writers)
				b.ReportMetric(float64(st.stats.Streams.Load())/float64(max(1, st.stats.Batches.Load())), "streams/commit")
			})
		}
	}
}

// BenchmarkRawInsert is the physical limit BenchmarkAppend is measured
// against: a single-row INSERT, committed on its own (synchronous=FULL),
// of the same row into a table with the same two unique indexes, from 1, 8
// and 32 goroutines sharing the one write connection.
func BenchmarkRawInsert(b *testing.B) {
	for _, writers := range benchWriters {
		b.Run(fmt.Sprintf("writers=%d", writers), func(b *testing.B) {
			db := newTestDB(b, Options{})
			ctx := context.Background()
			if _, err := db.Writer().ExecContext(ctx, `CREATE TABLE raw (
				seq INTEGER PRIMARY KEY AUTOINCREMENT, aggregate TEXT NOT NULL, aggregate_id TEXT NOT NULL,
				tenant TEXT NOT NULL, version INTEGER NOT NULL, stream_id TEXT NOT NULL, command_id TEXT NOT NULL,
				request_id TEXT NOT NULL, owner_id TEXT NOT NULL, header TEXT, create_time INTEGER NOT NULL,
				events TEXT NOT NULL) STRICT;
				CREATE UNIQUE INDEX raw_ver ON raw (aggregate, aggregate_id, version);
				CREATE UNIQUE INDEX raw_req ON raw (aggregate, aggregate_id, request_id);`); err != nil {
				b.Fatal(err)
			}
			insert, err := db.Writer().PrepareContext(ctx, `INSERT INTO raw (aggregate, aggregate_id, tenant, version,
				stream_id, command_id, request_id, owner_id, create_time, events) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`)
			if err != nil {
				b.Fatal(err)
			}
			defer insert.Close()
			var next, remaining atomic.Int64
			remaining.Store(int64(b.N))
			b.ReportAllocs()
			b.ResetTimer()
			start := time.Now()
			var wg sync.WaitGroup
			for range writers {
				wg.Go(func() {
					for remaining.Add(-1) >= 0 {
						s := sqlstoretest.BenchStream(factum.NamedAggregate{Context: "bench", Aggregate: "cart"}.WithID(fmt.Sprintf("agg-%d", next.Add(1))), 1)
						r, err := sqlstore.EncodeStream(&dialect, s)
						if err != nil {
							b.Error(err)
							return
						}
						if _, err := insert.ExecContext(ctx, r.Aggregate, r.AggregateID, r.Tenant, r.Version, r.StreamID,
							r.CommandID, r.RequestID, r.Owner, r.CreateTime.UnixMicro(), r.Events); err != nil {
							b.Error(err)
							return
						}
					}
				})
			}
			wg.Wait()
			b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "streams/s")
		})
	}
}

// BenchmarkLoad10000 loads an aggregate of 10,000 streams.
func BenchmarkLoad10000(b *testing.B) {
	sqlstoretest.BenchLoad10000(b, newTestEventStore(b, newTestDB(b, Options{Synchronous: "NORMAL"}), "bench", EventStoreOptions{}))
}

// BenchmarkReadLog reads a log of 10,000 streams from the start, in pages
// of 1,000.
func BenchmarkReadLog(b *testing.B) {
	sqlstoretest.BenchReadLog(b, newTestEventStore(b, newTestDB(b, Options{Synchronous: "NORMAL"}), "bench", EventStoreOptions{}))
}
