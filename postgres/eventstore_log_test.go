package postgres

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/internal/servicetest"
	"github.com/jackc/pgx/v5"
)

// logConsumer reads the global log the way event consumers do: from its
// checkpoint (the last position it handled), ReadLog, and WaitLog when
// nothing is left. It records every stream it sees.
type logConsumer struct {
	mu   sync.Mutex
	seen map[string]int // stream ID -> times seen
	got  []factum.EventStream
	errs []string
	stop context.CancelFunc
	done chan struct{}
}

func startConsumer(t *testing.T, st *EventStore, page int) *logConsumer {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	c := &logConsumer{seen: map[string]int{}, stop: cancel, done: make(chan struct{})}
	go func() {
		defer close(c.done)
		var pos factum.Position
		for ctx.Err() == nil {
			streams, err := st.ReadLog(ctx, pos, page)
			if err != nil {
				if ctx.Err() == nil {
					c.fail("read log after %v: %v", pos, err)
				}
				return
			}
			if len(streams) == 0 {
				wctx, wcancel := context.WithTimeout(ctx, 500*time.Millisecond)
				_ = st.WaitLog(wctx, pos)
				wcancel()
				continue
			}
			c.mu.Lock()
			for _, s := range streams {
				if !pos.Less(s.Position) {
					c.errs = append(c.errs, fmt.Sprintf("position %v read after %v", s.Position, pos))
				}
				pos = s.Position
				c.seen[s.ID]++
				c.got = append(c.got, s)
			}
			c.mu.Unlock()
		}
	}()
	t.Cleanup(c.close)
	return c
}

func (c *logConsumer) fail(format string, args ...any) {
	c.mu.Lock()
	c.errs = append(c.errs, fmt.Sprintf(format, args...))
	c.mu.Unlock()
}

func (c *logConsumer) close() {
	c.stop()
	<-c.done
}

// waitFor waits until the consumer has seen every stream of ids, failing
// after a generous deadline (the horizon is the whole server's, so another
// session's transaction may hold it back for a moment).
func (c *logConsumer) waitFor(t *testing.T, ids ...string) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		c.mu.Lock()
		missing := ""
		for _, id := range ids {
			if c.seen[id] == 0 {
				missing = id
				break
			}
		}
		c.mu.Unlock()
		if missing == "" {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the consumer never saw stream %s", missing)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// check fails on any consumer error and unless every stream seen was seen
// exactly once.
func (c *logConsumer) check(t *testing.T) {
	t.Helper()
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, e := range c.errs {
		t.Error(e)
	}
	for id, n := range c.seen {
		if n != 1 {
			t.Errorf("stream %s seen %d times", id, n)
		}
	}
}

func (c *logConsumer) order() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	ids := make([]string, len(c.got))
	for i, s := range c.got {
		ids[i] = s.ID
	}
	return ids
}

// rawInsert inserts s's row in tx, as a transaction of another writer
// would: the scenarios below need transactions held open between steps.
func rawInsert(t *testing.T, tx pgx.Tx, st *EventStore, s *factum.EventStream) {
	t.Helper()
	r, err := esEncode(s)
	if err != nil {
		t.Fatal(err)
	}
	_, err = tx.Exec(context.Background(), `INSERT INTO `+st.table+
		` (aggregate, aggregate_id, tenant, version, stream_id, command_id, request_id, owner_id, create_time, events)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10::json)`,
		r.Aggregate, r.AggregateID, r.Tenant, r.Version, r.StreamID, r.CommandID, r.RequestID, r.Owner, r.CreateTime, r.Events)
	if err != nil {
		t.Fatal(err)
	}
}

func readAll(t *testing.T, st *EventStore) []factum.EventStream {
	t.Helper()
	got, err := st.ReadLog(context.Background(), factum.Position{}, 1000)
	if err != nil {
		t.Fatal(err)
	}
	return got
}

// (a) A transaction holds an appended stream open while a later append
// commits; then the first commits. The later stream is not readable while
// the first is open, and the consumer sees both, once each.
func TestEventStoreLogHeldTransaction(t *testing.T) {
	db := newTestDB(t, 8)
	st := newTestEventStore(t, db, "shop", EventStoreOptions{ReadOwnAppendsWait: -1})
	ctx := context.Background()
	consumer := startConsumer(t, st, 10)

	held, err := db.Pool().Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer held.Rollback(ctx)
	first := testStream(shopCart.WithID("first"), 1, "r")
	rawInsert(t, held, st, first) // takes position 1, stays open

	later := testStream(shopCart.WithID("later"), 1, "r")
	if err := st.Append(ctx, later); err != nil {
		t.Fatal(err)
	}
	// The later stream is committed but not readable: the held
	// transaction is older and may still commit below it.
	if got := readAll(t, st); len(got) != 0 {
		t.Fatalf("while the older transaction is open the log returned %d streams", len(got))
	}
	// Nor does WaitLog report it: a waiter would only spin.
	wctx, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	err = st.WaitLog(wctx, factum.Position{})
	cancel()
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("WaitLog while nothing is readable = %v, want deadline exceeded", err)
	}

	// A waiter wakes when the older transaction ends, with no append or
	// notification to announce it.
	woke := make(chan error, 1)
	wctx, cancel = context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	go func() { woke <- st.WaitLog(wctx, factum.Position{}) }()
	if err := held.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-woke; err != nil {
		t.Fatalf("WaitLog after the older transaction committed: %v", err)
	}
	consumer.waitFor(t, first.ID, later.ID)
	consumer.check(t)
	if got := consumer.order(); len(got) != 2 || got[0] != first.ID || got[1] != later.ID {
		t.Fatalf("consumer saw %v, want [first later]", got)
	}
}

// (b) The trap of filtering by the horizon but checkpointing by position:
// transaction Y takes its ID early and inserts late (position 2), then
// commits while the younger X, which inserted position 1, is still open.
// Y's stream is readable at once; X's stream, committed afterwards, sorts
// after it by (xid, position), so the consumer, whose checkpoint is past
// position 2, still sees it.
func TestEventStoreLogEarlyTransactionIDLateInsert(t *testing.T) {
	db := newTestDB(t, 8)
	st := newTestEventStore(t, db, "shop", EventStoreOptions{})
	ctx := context.Background()
	consumer := startConsumer(t, st, 10)

	y, err := db.Pool().Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer y.Rollback(ctx)
	var yid uint64
	if err := y.QueryRow(ctx, `SELECT pg_current_xact_id()`).Scan(&yid); err != nil {
		t.Fatal(err)
	}
	x, err := db.Pool().Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer x.Rollback(ctx)
	sx := testStream(shopCart.WithID("x"), 1, "r")
	rawInsert(t, x, st, sx) // position 1, younger transaction ID
	sy := testStream(shopCart.WithID("y"), 1, "r")
	rawInsert(t, y, st, sy) // position 2, older transaction ID
	if err := y.Commit(ctx); err != nil {
		t.Fatal(err)
	}

	consumer.waitFor(t, sy.ID)
	got := readAll(t, st)
	if len(got) != 1 || got[0].ID != sy.ID {
		t.Fatalf("while X is open the log holds %d streams, want Y's alone", len(got))
	}
	if got[0].Position.Tx != yid {
		t.Fatalf("Y's stream has Tx %d, want its transaction ID %d", got[0].Position.Tx, yid)
	}

	if err := x.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	consumer.waitFor(t, sx.ID)
	consumer.check(t)
	all := readAll(t, st)
	if len(all) != 2 || all[0].ID != sy.ID || all[1].ID != sx.ID {
		t.Fatalf("log order = %v, want [y x]", all)
	}
	// This was the trap: X's stream has the lower position, which a
	// consumer checkpointing by position alone would have skipped.
	if all[1].Position.Seq >= all[0].Position.Seq {
		t.Fatalf("positions %v then %v: the scenario did not reproduce the trap", all[0].Position, all[1].Position)
	}
}

// Many writers append through the store while others write in raw
// transactions that take their IDs early or late, sleep between steps and
// sometimes roll back. A consumer reading all along, in small pages, sees
// every committed stream exactly once, no rolled-back one, and each
// aggregate's versions in order.
func TestEventStoreLogInterleavingsUnderLoad(t *testing.T) {
	db := newTestDB(t, 24)
	st := newTestEventStore(t, db, "shop", EventStoreOptions{})
	ctx := context.Background()
	consumer := startConsumer(t, st, 7)

	var mu sync.Mutex
	committed := map[string]bool{}
	var rolledBack []string
	var wg sync.WaitGroup
	const rawWriters, storeWriters, rounds = 6, 6, 25
	for w := range rawWriters {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(w), 1))
			for i := range rounds {
				tx, err := db.Pool().Begin(ctx)
				if err != nil {
					t.Error(err)
					return
				}
				if rng.IntN(2) == 0 {
					if _, err := tx.Exec(ctx, `SELECT pg_current_xact_id()`); err != nil {
						t.Error(err)
					}
				}
				time.Sleep(time.Duration(rng.IntN(3000)) * time.Microsecond)
				s := testStream(shopCart.WithID(fmt.Sprintf("raw-%d-%d", w, i)), 1, "r")
				rawInsert(t, tx, st, s)
				time.Sleep(time.Duration(rng.IntN(3000)) * time.Microsecond)
				if rng.IntN(10) == 0 {
					tx.Rollback(ctx)
					mu.Lock()
					rolledBack = append(rolledBack, s.ID)
					mu.Unlock()
					continue
				}
				if err := tx.Commit(ctx); err != nil {
					t.Error(err)
					continue
				}
				mu.Lock()
				committed[s.ID] = true
				mu.Unlock()
			}
		})
	}
	for w := range storeWriters {
		wg.Go(func() {
			for i := range rounds {
				id := shopCart.WithID(fmt.Sprintf("store-%d-%d", w, i))
				for v := 1; v <= 2; v++ {
					s := testStream(id, v, fmt.Sprintf("r%d", v))
					if err := st.Append(ctx, s); err != nil {
						t.Error(err)
						return
					}
					mu.Lock()
					committed[s.ID] = true
					mu.Unlock()
				}
			}
		})
	}
	wg.Wait()
	ids := make([]string, 0, len(committed))
	for id := range committed {
		ids = append(ids, id)
	}
	consumer.waitFor(t, ids...)
	consumer.close()
	consumer.check(t)
	for _, id := range rolledBack {
		if consumer.seen[id] != 0 {
			t.Errorf("rolled-back stream %s was read", id)
		}
	}
	if len(consumer.got) != len(committed) {
		t.Errorf("consumer saw %d streams, %d were committed", len(consumer.got), len(committed))
	}
	last := map[string]int{}
	for _, s := range consumer.got {
		if s.Version != last[s.AggregateID.ID]+1 {
			t.Errorf("log holds %s v%d after v%d", s.AggregateID.ID, s.Version, last[s.AggregateID.ID])
		}
		last[s.AggregateID.ID] = s.Version
	}
}

// A waiter in another process (another store value on its own pool) is
// woken by NOTIFY, well before its poll interval.
func TestEventStoreWaitLogNotifiedAcrossProcesses(t *testing.T) {
	url, schema := servicetest.PostgresSchema(t)
	open := func(opts EventStoreOptions) *EventStore {
		db, err := Open(context.Background(), url, Options{Schema: schema})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(db.Close)
		return newTestEventStore(t, db, "shop", opts)
	}
	reader := open(EventStoreOptions{PollInterval: time.Hour})
	writer := open(EventStoreOptions{})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	// Start the listener and wait until it listens.
	wctx, wcancel := context.WithTimeout(ctx, 10*time.Millisecond)
	_ = reader.WaitLog(wctx, factum.Position{})
	wcancel()
	listen := "LISTEN " + pgx.Identifier{reader.channel}.Sanitize()
	for {
		var n int
		if err := writer.pool.QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity WHERE query = $1 AND state = 'idle'`, listen).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n > 0 {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}

	woke := make(chan error, 1)
	go func() { woke <- reader.WaitLog(ctx, factum.Position{}) }()
	s := testStream(shopCart.WithID("c"), 1, "r")
	if err := writer.Append(ctx, s); err != nil {
		t.Fatal(err)
	}
	if err := <-woke; err != nil {
		t.Fatalf("waiter: %v (with an hour's poll interval, only NOTIFY wakes it)", err)
	}
	if got := readAll(t, reader); len(got) != 1 || got[0].ID != s.ID {
		t.Fatalf("log after waking: %v", got)
	}
}

// Appends within one NotifyInterval share one NOTIFY: a burst of appends
// after a quiet spell sends one at once and the next only when the
// interval has passed (here an hour, so never during the test).
func TestEventStoreNotifyIsRateLimited(t *testing.T) {
	db := newTestDB(t, 8)
	st := newTestEventStore(t, db, "shop", EventStoreOptions{NotifyInterval: time.Hour})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := pgx.ConnectConfig(ctx, db.Pool().Config().ConnConfig.Copy())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	if _, err := conn.Exec(ctx, "LISTEN "+pgx.Identifier{st.channel}.Sanitize()); err != nil {
		t.Fatal(err)
	}
	for i := range 50 {
		if err := st.Append(ctx, testStream(shopCart.WithID(fmt.Sprint("n-", i)), 1, "r")); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := conn.WaitForNotification(ctx); err != nil {
		t.Fatalf("no notification after 50 appends: %v", err)
	}
	quiet, stop := context.WithTimeout(ctx, 300*time.Millisecond)
	defer stop()
	if n, err := conn.WaitForNotification(quiet); err == nil {
		t.Fatalf("a second notification within the interval: %+v", n)
	}
}
