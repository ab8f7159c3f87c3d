package postgres

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
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
				benchAppend(b, st, writers)
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
			benchAppend(b, st, 32)
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

// benchAppend runs sqlstoretest.BenchAppend on st from callers goroutines
// and adds streams per statement and, when the server runs on this machine,
// server-cpu-ns/op: the CPU time of the writers' server processes per
// stream (read from /proc), the share cpu-ns/op leaves out. Their sum is
// what bounds throughput on a machine whose cores the client and the
// server share.
func benchAppend(b *testing.B, st *EventStore, callers int) {
	b.Helper()
	pids := st.writerPIDs(b)
	before, ok := serverCPU(pids)
	sqlstoretest.BenchAppend(b, st, callers)
	after, ok2 := serverCPU(pids)
	b.ReportMetric(float64(st.stats.Streams.Load())/float64(max(1, st.stats.Batches.Load())), "streams/stmt")
	if ok && ok2 && b.N > 0 {
		b.ReportMetric(float64(after-before)/float64(b.N), "server-cpu-ns/op")
	}
}

// writerPIDs opens every writer's connection and returns the server
// process IDs behind them, holding all writer slots at once so that each
// writer is visited once.
func (s *EventStore) writerPIDs(b *testing.B) []uint32 {
	b.Helper()
	var pids []uint32
	var visit func(n int)
	visit = func(n int) {
		if n == 0 {
			return
		}
		s.appends.WithWriter(func(w *esWriter) {
			conn, err := w.connect(context.Background(), s)
			if err != nil {
				b.Fatal(err)
			}
			pids = append(pids, conn.PgConn().PID())
			visit(n - 1)
		})
	}
	visit(s.opts.Writers)
	return pids
}

// serverCPU sums the time on CPU of the server processes pids, as
// /proc/<pid>/schedstat reports it; false if the server is not local.
func serverCPU(pids []uint32) (ns int64, ok bool) {
	for _, pid := range pids {
		// A process of that ID here is the server's only if it is PostgreSQL.
		if comm, err := os.ReadFile(fmt.Sprintf("/proc/%d/comm", pid)); err != nil || !strings.HasPrefix(string(comm), "postgres") {
			return 0, false
		}
		data, err := os.ReadFile(fmt.Sprintf("/proc/%d/schedstat", pid))
		if err != nil {
			return 0, false
		}
		fields := strings.Fields(string(data))
		if len(fields) == 0 {
			return 0, false
		}
		v, err := strconv.ParseInt(fields[0], 10, 64)
		if err != nil {
			return 0, false
		}
		ns += v
	}
	return ns, len(pids) > 0
}

// BenchmarkAppendGroup appends runs of 8 streams of one aggregate as one
// group (AppendBuiltGroup: one statement) or as 8 Appends one after
// another, from one writer and from 8 writers at once, each to an
// aggregate of its own. One op is one run; commits/stream counts the
// statements that wrote the streams, each its own transaction.
func BenchmarkAppendGroup(b *testing.B) {
	for _, writers := range []int{1, 8} {
		for _, mode := range []string{"sequential", "group"} {
			b.Run(fmt.Sprintf("%s/aggregates=%d", mode, writers), func(b *testing.B) {
				st := newTestEventStore(b, newTestDB(b, int32(writers+4)), "bench", EventStoreOptions{})
				sqlstoretest.BenchAppendRuns(b, st, writers, 8, mode == "group", st.stats.Batches.Load)
			})
		}
	}
}
