package sqlite

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/internal/sqlstore"
	"github.com/factum-go/factum/query"
	"github.com/factum-go/factum/snapshot"
)

// The DB's reads run through statements prepared once and kept: the same
// statement again adds nothing to the cache, a new one adds one, up to
// MaxCachedStmts; past the bound, and after Close, statements still run,
// unprepared. The writer's cache prepares nothing on first use: its
// statements are the stores' own, prepared when the store is made.
func TestStatementCaches(t *testing.T) {
	ctx := context.Background()
	db := newTestDB(t, Options{})
	if _, err := NewSnapshotStore(ctx, db, "shop"); err != nil {
		t.Fatal(err)
	}
	if _, err := NewCheckpointStore(ctx, db, "shop"); err != nil {
		t.Fatal(err)
	}
	cps, err := NewCheckpointStore(ctx, db, "shop") // a second store of the context shares the statements
	if err != nil {
		t.Fatal(err)
	}
	// The snapshot saves' transactions carry the checkpoint's upsert too:
	// it runs prepared there, from the checkpoint store's preparation.
	if db.writeStmts.Stmt(ctx, cps.checkpointStore.(*sqlstore.Checkpoints).Upsert) == nil {
		t.Error("the checkpoint upsert is not prepared on the write connection")
	}
	writes := db.writeStmts.Len()
	if writes != 3 {
		t.Errorf("the writer holds %d statements, want 3 (snapshot upsert and tenant check, checkpoint upsert)", writes)
	}

	scalar := func(ex sqlstore.Executor, q string, arg int) int {
		t.Helper()
		var n int
		if err := ex.QueryRow(ctx, q, arg).Scan(&n); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		return n
	}
	reads := db.reads()
	base := db.readStmts.Len()
	for range 3 {
		if got := scalar(reads, "SELECT ?1 + 1", 41); got != 42 {
			t.Fatalf("read %d, want 42", got)
		}
	}
	if got := db.readStmts.Len(); got != base+1 {
		t.Errorf("after one statement run three times the reader holds %d statements, want %d", got, base+1)
	}
	for i := db.readStmts.Len(); i < sqlstore.MaxCachedStmts+10; i++ {
		if got := scalar(reads, fmt.Sprintf("SELECT ?1 + %d", i), 1); got != i+1 {
			t.Fatalf("read %d, want %d", got, i+1)
		}
	}
	if got := db.readStmts.Len(); got != sqlstore.MaxCachedStmts {
		t.Errorf("the reader holds %d statements, want the bound %d", got, sqlstore.MaxCachedStmts)
	}
	if st := db.writeStmts.Stmt(ctx, "SELECT 1"); st != nil || db.writeStmts.Len() != writes {
		t.Error("the writer's cache prepared a statement on first use")
	}

	if err := db.readStmts.Close(); err != nil {
		t.Fatal(err)
	}
	if got := scalar(reads, "SELECT ?1 + 1", 1); got != 2 {
		t.Errorf("after Close the read gives %d, want 2", got)
	}
	if _, err := db.readStmts.Prepare(ctx, "SELECT 2"); err == nil {
		t.Error("Prepare after Close: no error")
	}
}

// Concurrent first uses of the same statements keep one statement each,
// and every read gets its own answer (run with -race).
func TestStatementCacheConcurrentFirstUse(t *testing.T) {
	ctx := context.Background()
	db := newTestDB(t, Options{})
	reads := db.reads()
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 50 {
				q := fmt.Sprintf("SELECT ?1 * %d", i%5)
				var n int
				if err := reads.QueryRow(ctx, q, g).Scan(&n); err != nil {
					t.Error(err)
					return
				}
				if n != g*(i%5) {
					t.Errorf("%s with %d: %d", q, g, n)
				}
			}
		})
	}
	wg.Wait()
	if got := db.readStmts.Len(); got != 5 {
		t.Errorf("the reader holds %d statements, want 5", got)
	}
}

// The readers stay open between reads: none is closed as a surplus idle
// connection when concurrent reads return them to the pool (a connection
// opened again costs its pragmas, its prepared statements and its page
// cache).
func TestReadersStayOpen(t *testing.T) {
	ctx := context.Background()
	db := newTestDB(t, Options{MaxReaders: 4})
	reads := db.reads()
	var wg sync.WaitGroup
	for range 16 {
		wg.Go(func() {
			for range 50 {
				rows, err := reads.Query(ctx, "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 20) SELECT i FROM n")
				if err != nil {
					t.Error(err)
					return
				}
				for rows.Next() {
				}
				rows.Close()
			}
		})
	}
	wg.Wait()
	if s := db.Reader().Stats(); s.MaxIdleClosed > 0 {
		t.Errorf("%d reader connections closed as surplus idle (%d opened)", s.MaxIdleClosed, s.OpenConnections)
	}
}

// Translated queries build their text per call: they run unprepared, so
// that a service answering many query shapes does not fill the readers'
// statement cache and leave the stores' fixed reads unprepared.
func TestTranslatedQueriesAreNotCached(t *testing.T) {
	ctx := context.Background()
	db := newTestDB(t, Options{})
	st, err := NewSnapshotStore(ctx, db, "shop")
	if err != nil {
		t.Fatal(err)
	}
	carts := factum.NamedAggregate{Context: "shop", Aggregate: "cart"}
	if _, err := st.Save(ctx, snapshot.Snapshot{AggregateID: carts.WithID("c1"), Version: 1, State: json.RawMessage(`{"n":1}`)}); err != nil {
		t.Fatal(err)
	}
	svc, err := snapshot.NewQueryService(st, carts, query.Planner{})
	if err != nil {
		t.Fatal(err)
	}
	before := db.readStmts.Len()
	for i := range 20 {
		vals := make([]any, i+1) // an IN list of another length: another text
		for j := range vals {
			vals[j] = j
		}
		if _, err := svc.List(ctx, query.Query{Condition: query.In("state.n", vals...), Limit: 10}); err != nil {
			t.Fatal(err)
		}
		if _, err := svc.Count(ctx, query.In("state.n", vals...)); err != nil {
			t.Fatal(err)
		}
	}
	if got := db.readStmts.Len(); got != before {
		t.Errorf("the readers' cache holds %d statements after 40 translated queries, %d before: translated queries were cached", got, before)
	}
}

// A cached read refuses a context that has ended, and once started runs
// to its end whatever becomes of its context: no watcher stops it half
// way (see sqlstore.StdDBCached). An unprepared one still stops.
func TestCachedReadsRunWithoutCancellation(t *testing.T) {
	db := newTestDB(t, Options{Synchronous: "NORMAL"})
	reads := db.reads()
	const q = `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?1) SELECT i FROM n`
	// count reads up to total rows, cancelling the read's context at the
	// tenth.
	count := func(ex sqlstore.Executor, total int) (int, error) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		rows, err := ex.Query(ctx, q, total)
		if err != nil {
			return 0, err
		}
		defer rows.Close()
		n := 0
		for rows.Next() {
			if n++; n == 10 {
				cancel()
			}
		}
		return n, rows.Err()
	}
	if n, err := count(reads, 1000); n != 1000 || err != nil {
		t.Errorf("cached read: %d rows, %v; want 1000 and no error", n, err)
	}
	// Endless but for its context: it stops whenever the cancellation
	// lands.
	if n, err := count(sqlstore.Unprepared(reads), 1e9); !errors.Is(err, context.Canceled) {
		t.Errorf("unprepared read: %d rows, %v; want it stopped by its context", n, err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var n int
	if err := reads.QueryRow(ctx, q, 1).Scan(&n); !errors.Is(err, context.Canceled) {
		t.Errorf("cached read with an ended context: %v, want %v", err, context.Canceled)
	}
	if _, err := reads.Query(ctx, q, 1); !errors.Is(err, context.Canceled) {
		t.Errorf("cached query with an ended context: %v, want %v", err, context.Canceled)
	}
}

// cancelledAfter is a context whose Err reports it cancelled once it has
// been asked more than n times: a cancellation that lands after a read has
// begun, without the timing of a real one.
type cancelledAfter struct {
	context.Context
	calls atomic.Int32
	n     int32
}

func (c *cancelledAfter) Err() error {
	if c.calls.Add(1) > c.n {
		return context.Canceled
	}
	return nil
}

// A cached read with many rows (an aggregate's load) looks at its context
// between rows, since the driver does not watch it: a cancellation that
// lands once the read has begun ends it.
func TestCachedLoadEndsWhenCancelledWhileReading(t *testing.T) {
	db := newTestDB(t, Options{Synchronous: "NORMAL"})
	st := newTestEventStore(t, db, "shop", EventStoreOptions{})
	ctx := context.Background()
	long, short := esShopCart.WithID("long"), esShopCart.WithID("short")
	if err := st.Append(ctx, testStream(short, 1, "s1")); err != nil {
		t.Fatal(err)
	}
	const streams = 600
	for v := 1; v <= streams; v++ {
		if err := st.Append(ctx, testStream(long, v, fmt.Sprintf("l%d", v))); err != nil {
			t.Fatal(err)
		}
	}
	// How often a load of one stream asks its context: all of it before
	// or at its first row.
	probe := &cancelledAfter{Context: ctx, n: 1 << 30}
	if got, err := st.Load(probe, short, 1, 1); err != nil || len(got) != 1 {
		t.Fatalf("load of one stream: %d, %v", len(got), err)
	}
	before := probe.calls.Load()
	got, err := st.Load(&cancelledAfter{Context: ctx, n: before}, long, 1, streams)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("load cancelled after it began: %d streams, %v; want %v", len(got), err, context.Canceled)
	}
}

// A cached scan of snapshots looks at its context between rows too.
func TestCachedScanEndsWhenCancelledWhileReading(t *testing.T) {
	db := newTestDB(t, Options{Synchronous: "NORMAL"})
	ctx := context.Background()
	st, err := NewSnapshotStore(ctx, db, "shop")
	if err != nil {
		t.Fatal(err)
	}
	const snaps = 600
	for i := range snaps {
		if _, err := st.Save(ctx, snapshot.Snapshot{AggregateID: esShopCart.WithID(fmt.Sprintf("c%04d", i)), Version: 1, State: json.RawMessage(`{"n":1}`)}); err != nil {
			t.Fatal(err)
		}
	}
	scanner, ok := st.Backend().(interface {
		Scan(ctx context.Context, named factum.NamedAggregate, afterID string, limit int) ([]snapshot.Snapshot, error)
	})
	if !ok {
		t.Fatal("the snapshot store's backend scans no snapshots")
	}
	// How often a scan of one snapshot asks its context: all of it before
	// or at its first row.
	probe := &cancelledAfter{Context: ctx, n: 1 << 30}
	if got, err := scanner.Scan(probe, esShopCart, "", 1); err != nil || len(got) != 1 {
		t.Fatalf("scan of one snapshot: %d, %v", len(got), err)
	}
	got, err := scanner.Scan(&cancelledAfter{Context: ctx, n: probe.calls.Load()}, esShopCart, "", snaps)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("scan cancelled after it began: %d snapshots, %v; want %v", len(got), err, context.Canceled)
	}
}
