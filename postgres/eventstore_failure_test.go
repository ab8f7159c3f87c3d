package postgres

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/eventstore"
	"github.com/jackc/pgx/v5"
)

// lockTable blocks every insert into the store's table until the returned
// function is called.
func lockTable(t *testing.T, db *DB, st *EventStore) (release func()) {
	t.Helper()
	ctx := context.Background()
	tx, err := db.Pool().Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(ctx, `LOCK TABLE `+st.table+` IN SHARE MODE`); err != nil {
		t.Fatal(err)
	}
	var once bool
	release = func() {
		if !once {
			once = true
			tx.Rollback(ctx)
		}
	}
	t.Cleanup(release)
	return release
}

// blockedInserts returns the server processes waiting to insert into the
// store's table.
func blockedInserts(t *testing.T, db *DB, st *EventStore) []int32 {
	t.Helper()
	rows, err := db.Pool().Query(context.Background(),
		`SELECT pid FROM pg_locks WHERE relation = $1::regclass AND NOT granted ORDER BY pid`, st.table)
	if err != nil {
		t.Fatal(err)
	}
	pids, err := pgx.CollectRows(rows, pgx.RowTo[int32])
	if err != nil {
		t.Fatal(err)
	}
	return pids
}

// awaitBlocked waits until n statements wait on the table lock.
func awaitBlocked(t *testing.T, db *DB, st *EventStore, n int) []int32 {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		pids := blockedInserts(t, db, st)
		if len(pids) == n {
			return pids
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d statements wait on the table, want %d", len(pids), n)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

func appendAsync(ctx context.Context, st *EventStore, s *factum.EventStream) <-chan error {
	c := make(chan error, 1)
	go func() { c <- st.Append(ctx, s) }()
	return c
}

// receive waits for an Append's result, failing if it hangs.
func receive(t *testing.T, c <-chan error) error {
	t.Helper()
	select {
	case err := <-c:
		return err
	case <-time.After(15 * time.Second):
		t.Fatal("append did not return")
		return nil
	}
}

func streamsOf(t *testing.T, st *EventStore, id factum.AggregateID) int {
	t.Helper()
	got, err := st.Load(context.Background(), id, 1, eventstore.MaxVersion)
	if err != nil {
		t.Fatal(err)
	}
	return len(got)
}

// A connection killed in the middle of an append: every append in the
// statement gets an error (not a conflict), nothing of it is stored, and
// appending again succeeds.
func TestEventStoreConnectionKilledMidAppend(t *testing.T) {
	db := newTestDB(t, 8)
	st := newTestEventStore(t, db, "shop", EventStoreOptions{Writers: 2})
	ctx := context.Background()
	release := lockTable(t, db, st)

	const n = 6
	streams := make([]*factum.EventStream, n)
	results := make([]<-chan error, n)
	for i := range streams {
		streams[i] = testStream(shopCart.WithID(fmt.Sprintf("k-%d", i)), 1, "r")
		results[i] = appendAsync(ctx, st, streams[i])
	}
	// Both writers' statements wait on the lock; the rest of the appends
	// wait for a writer. Kill the statements' connections.
	pids := awaitBlocked(t, db, st, 2)
	for _, pid := range pids {
		if _, err := db.Pool().Exec(ctx, `SELECT pg_terminate_backend($1)`, pid); err != nil {
			t.Fatal(err)
		}
	}
	// The queued appends go into new statements, which wait on the lock
	// again: kill those too until every append has answered.
	failed := 0
	for i, c := range results {
		for {
			select {
			case err := <-c:
				if err == nil {
					t.Fatalf("append %d succeeded while the table was locked", i)
				}
				if code := factum.CodeOf(err); code != factum.CodeInternalServerError {
					t.Fatalf("append %d: %v (code %s), want a connection error", i, err, code)
				}
				failed++
			case <-time.After(20 * time.Millisecond):
				for _, pid := range blockedInserts(t, db, st) {
					db.Pool().Exec(ctx, `SELECT pg_terminate_backend($1)`, pid)
				}
				continue
			}
			break
		}
	}
	release()
	for _, s := range streams {
		if got := streamsOf(t, st, s.AggregateID); got != 0 {
			t.Fatalf("%s: %d streams stored by a killed statement", s.AggregateID, got)
		}
	}
	for _, s := range streams {
		if err := st.Append(ctx, s); err != nil {
			t.Fatalf("retry after the connection was killed: %v", err)
		}
	}
	for _, s := range streams {
		if got := streamsOf(t, st, s.AggregateID); got != 1 {
			t.Fatalf("%s: %d streams after the retry, want 1", s.AggregateID, got)
		}
	}
}

// A cancelled context cancels the statement on the server, not only the
// wait for it: once the caller has returned, the statement stops waiting,
// and releasing the lock afterwards stores nothing.
func TestEventStoreCancelCancelsTheStatement(t *testing.T) {
	db := newTestDB(t, 8)
	st := newTestEventStore(t, db, "shop", EventStoreOptions{Writers: 1})
	release := lockTable(t, db, st)

	ctx, cancel := context.WithCancel(context.Background())
	s := testStream(shopCart.WithID("cancelled"), 1, "r")
	c := appendAsync(ctx, st, s)
	awaitBlocked(t, db, st, 1)
	cancel()
	if err := receive(t, c); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled append: %v, want context.Canceled", err)
	}
	awaitBlocked(t, db, st, 0) // the server cancelled the statement
	release()
	if got := streamsOf(t, st, s.AggregateID); got != 0 {
		t.Fatalf("the cancelled append stored %d streams", got)
	}
	if err := st.Append(context.Background(), s); err != nil {
		t.Fatalf("append after the cancel: %v", err)
	}
}

// One caller's cancellation does not cancel a statement shared with
// others: the statement goes on, the other caller gets its result, and
// the cancelled caller's append, already in the statement, is stored (its
// outcome was unknown to it, as Append documents).
func TestEventStoreCancelInSharedStatement(t *testing.T) {
	db := newTestDB(t, 8)
	st := newTestEventStore(t, db, "shop", EventStoreOptions{Writers: 1})
	release := lockTable(t, db, st)

	// The one writer is held in a first statement...
	firstCtx, cancelFirst := context.WithCancel(context.Background())
	first := appendAsync(firstCtx, st, testStream(shopCart.WithID("first"), 1, "r"))
	held := awaitBlocked(t, db, st, 1)[0]
	// ...while two more appends queue up behind it.
	bCtx, cancelB := context.WithCancel(context.Background())
	b := testStream(shopCart.WithID("b"), 1, "r")
	c := testStream(shopCart.WithID("c"), 1, "r")
	bRes := appendAsync(bCtx, st, b)
	cRes := appendAsync(context.Background(), st, c)
	for queued := 0; queued < 2; {
		time.Sleep(time.Millisecond)
		queued = st.appends.Queued()
	}
	// Cancelling the first frees the writer, which writes b and c in one
	// statement, which waits on the lock in turn.
	cancelFirst()
	if err := receive(t, first); !errors.Is(err, context.Canceled) {
		t.Fatalf("first: %v", err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for pids := blockedInserts(t, db, st); len(pids) != 1 || pids[0] == held; pids = blockedInserts(t, db, st) {
		if time.Now().After(deadline) {
			t.Fatalf("the second statement never waited on the lock (waiting: %v)", pids)
		}
		time.Sleep(2 * time.Millisecond)
	}
	cancelB()
	if err := receive(t, bRes); !errors.Is(err, context.Canceled) {
		t.Fatalf("b: %v", err)
	}
	release()
	if err := receive(t, cRes); err != nil {
		t.Fatalf("c, sharing the statement with the cancelled b: %v", err)
	}
	if got := streamsOf(t, st, b.AggregateID); got != 1 {
		t.Fatalf("b: %d streams; the shared statement should have gone on", got)
	}
	if got := streamsOf(t, st, shopCart.WithID("first")); got != 0 {
		t.Fatalf("first: %d streams; its statement was cancelled", got)
	}
}

// A server that is down gives a clear error at start-up, within the
// connect timeout, and a store whose pool has gone fails appends and
// reads at once rather than hanging.
func TestEventStoreServerDown(t *testing.T) {
	ctx := context.Background()
	for _, url := range []string{
		"postgres://postgres@127.0.0.1:1/test?sslmode=disable",                         // refused
		"postgres://postgres@10.255.255.1:5432/test?sslmode=disable&connect_timeout=1", // unroutable: times out
	} {
		start := time.Now()
		_, err := Open(ctx, url, Options{ConnectTimeout: 2 * time.Second})
		if err == nil {
			t.Fatalf("open %s succeeded", url)
		}
		if d := time.Since(start); d > 10*time.Second {
			t.Fatalf("open %s took %v", url, d)
		}
		if !strings.Contains(err.Error(), "postgres: connect to") {
			t.Fatalf("open %s: %q does not say what failed", url, err)
		}
	}

	db := newTestDB(t, 4)
	st := newTestEventStore(t, db, "shop", EventStoreOptions{})
	db.Close()
	done := make(chan error, 2)
	go func() { done <- st.Append(ctx, testStream(shopCart.WithID("c"), 1, "r")) }()
	go func() {
		_, err := st.ReadLog(ctx, factum.Position{}, 10)
		done <- err
	}()
	for range 2 {
		if err := receive(t, done); err == nil {
			t.Fatal("an operation on a closed pool succeeded")
		}
	}
}

// A statement the server refuses for one row's data stores nothing, so the
// writer writes each append of it on its own: only the bad one fails, as
// IllegalArgument. (Append refuses such data itself; the writer is fed a
// bad row directly here.)
func TestEventStoreBadRowDoesNotFailTheBatch(t *testing.T) {
	db := newTestDB(t, 4)
	st := newTestEventStore(t, db, "shop", EventStoreOptions{})
	var batch []*esRequest
	var ids []factum.AggregateID
	for i := range 5 {
		id := shopCart.WithID(fmt.Sprintf("b-%d", i))
		row, err := esEncode(testStream(id, 1, "r"))
		if err != nil {
			t.Fatal(err)
		}
		if i == 2 {
			row.Events = `[{"not json`
		}
		ids = append(ids, id)
		batch = append(batch, &esRequest{Ctx: context.Background(), Row: row, Done: make(chan esResult, 1)})
	}
	for left := batch; len(left) > 0; {
		left = testFlush(st, left) // a batch the store has no statement size for is written in parts
	}
	for i, r := range batch {
		res := <-r.Done
		if i == 2 {
			if res.Outcome != eventstore.Failed || !errors.Is(res.Err, factum.ErrIllegalArgument) {
				t.Fatalf("bad row: outcome %d, %v; want IllegalArgument", res.Outcome, res.Err)
			}
			continue
		}
		if res.Outcome != eventstore.Appended {
			t.Fatalf("row %d: outcome %d, %v", i, res.Outcome, res.Err)
		}
	}
	for i, id := range ids {
		want := 1
		if i == 2 {
			want = 0
		}
		if got := streamsOf(t, st, id); got != want {
			t.Fatalf("%s: %d streams, want %d", id, got, want)
		}
	}
}

// A unique violation of an index outside the append contract (here one an
// operator added on stream IDs) is an error, never mistaken for a conflict,
// and fails only the row that caused it.
func TestEventStoreForeignUniqueViolationIsAnError(t *testing.T) {
	db := newTestDB(t, 8)
	st := newTestEventStore(t, db, "shop", EventStoreOptions{})
	ctx := context.Background()
	if _, err := db.Pool().Exec(ctx, `CREATE UNIQUE INDEX extra_stream_id ON `+st.table+` (stream_id)`); err != nil {
		t.Fatal(err)
	}
	first := testStream(shopCart.WithID("a"), 1, "r")
	if err := st.Append(ctx, first); err != nil {
		t.Fatal(err)
	}
	same := testStream(shopCart.WithID("b"), 1, "r")
	same.ID = first.ID
	err := st.Append(ctx, same)
	if err == nil || factum.CodeOf(err) != factum.CodeInternalServerError || !strings.Contains(err.Error(), "extra_stream_id") {
		t.Fatalf("append violating another unique index: %v, want an error naming it", err)
	}

	// In a coalesced statement, only that row fails.
	var batch []*esRequest
	for i := range 4 {
		s := testStream(shopCart.WithID(fmt.Sprintf("c-%d", i)), 1, "r")
		if i == 1 {
			s.ID = first.ID
		}
		row, err := esEncode(s)
		if err != nil {
			t.Fatal(err)
		}
		batch = append(batch, &esRequest{Ctx: ctx, Row: row, Done: make(chan esResult, 1)})
	}
	for left := batch; len(left) > 0; {
		left = testFlush(st, left)
	}
	for i, r := range batch {
		res := <-r.Done
		if (res.Outcome == eventstore.Appended) != (i != 1) {
			t.Fatalf("row %d: outcome %d, %v", i, res.Outcome, res.Err)
		}
	}
}

// testFlush writes batch as a writer of st would, returning what is to be
// written again.
func testFlush(st *EventStore, batch []*esRequest) []*esRequest {
	var retry []*esRequest
	st.appends.WithWriter(func(w *esWriter) { retry = st.flush(w, batch) })
	return retry
}

// A writer whose connection's server process ended while it sat idle (a
// restart, a failover, an idle timeout) finds out before it writes: the
// next append succeeds on a new connection rather than failing.
func TestEventStoreWriterSurvivesAnIdleKill(t *testing.T) {
	db := newTestDB(t, 4)
	st := newTestEventStore(t, db, "shop", EventStoreOptions{Writers: 1})
	ctx := context.Background()
	if err := st.Append(ctx, testStream(shopCart.WithID("before"), 1, "r")); err != nil {
		t.Fatal(err)
	}
	var pid uint32
	st.appends.WithWriter(func(w *esWriter) { pid = w.conn.PgConn().PID() })
	if _, err := db.Pool().Exec(ctx, `SELECT pg_terminate_backend($1)`, pid); err != nil {
		t.Fatal(err)
	}
	time.Sleep(esWriterIdleCheck + 100*time.Millisecond) // idle long enough to be checked
	if err := st.Append(ctx, testStream(shopCart.WithID("after"), 1, "r")); err != nil {
		t.Fatalf("append after the writer's connection was killed: %v", err)
	}
}
