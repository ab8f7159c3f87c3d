package postgres

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/idempotency"
	"github.com/factum-go/factum/internal/memo"
	"github.com/factum-go/factum/internal/servicetest"
	"github.com/factum-go/factum/internal/sqlstore"
	"github.com/factum-go/factum/query"
	"github.com/factum-go/factum/snapshot"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// planRows is how many rows the every-statement plan test puts in each
// table: the plans that went wrong did so only once a table held a few
// hundred thousand rows.
const planRows = 200_000

// Every statement the stores send on the consumer and query paths (log
// reads and waits, checkpoints, leases, aggregate and snapshot loads,
// snapshot queries written by package sqlquery, idempotency keys, prepare
// keys) is recorded as the stores send it, by a tracer on the pool, while
// the test drives the stores' own methods over tables of planRows rows.
// Each recorded statement is then prepared and explained as a generic
// plan, the plan a prepared statement settles on (plan_cache_mode =
// force_generic_plan): none may scan a table or hash a subplan. The
// statement list is not written down in the test, so a statement added to
// these paths is checked without anyone naming it; the named statements
// below must each have been sent, so that a path the test stops driving
// shows up as a failure rather than as a silent gap.
func TestEveryStatementProbesAnIndex(t *testing.T) {
	if testing.Short() {
		t.Skip("fills tables of 200,000 rows")
	}
	ctx := context.Background()
	rec := &statementRecorder{seen: map[string][]any{}}
	db := newTracedTestDB(t, rec)
	es := newTestEventStore(t, db, "shop", EventStoreOptions{})
	cps, err := NewCheckpointStore(ctx, db, "shop")
	if err != nil {
		t.Fatal(err)
	}
	snaps, err := NewSnapshotStore(ctx, db, "shop")
	if err != nil {
		t.Fatal(err)
	}
	idem, err := NewIdempotencyStore(ctx, db, IdempotencyOptions{})
	if err != nil {
		t.Fatal(err)
	}
	prep, err := NewPrepareBackend(ctx, db, PrepareOptions{PurgeEvery: -1})
	if err != nil {
		t.Fatal(err)
	}
	fillPlanTables(t, db, es, snaps)

	rec.on.Store(true)
	drivePlanPaths(t, es, cps, snaps, idem, prep)
	rec.on.Store(false)

	// The statements known by name must all have been sent.
	named := map[string]string{
		"read log": es.q.readLog, "log state": es.q.logState,
		"load": es.reads.LoadSQL, "load by time": es.reads.LoadByTimeSQL, "lookup": es.reads.LookupSQL,
		"request exists": es.reads.RequestExistsSQL, "scan": es.reads.ScanSQL,
		"snapshot save": snaps.core.UpsertSQL, "snapshot load": snaps.core.LoadSQL, "snapshot tenant": snaps.core.TenantSQL,
		"idempotency claim": idem.q.claim, "idempotency read": idem.q.read, "idempotency read locked": idem.q.readLocked,
		"idempotency finish": idem.q.finish, "idempotency purge": idem.q.purge,
		"prepare": prepareUpsert, "prepare get": prepareGet, "prepare get locked": prepareGetLocked, "prepare purge": preparePurgeBatch,
	}
	for name, sql := range named {
		if _, ok := rec.seen[sql]; !ok {
			t.Errorf("the %s statement was not sent: the test no longer drives its path", name)
		}
	}
	counts := map[string]int{}
	for _, sql := range rec.order {
		for _, table := range []string{"_checkpoints", "_leases", "_snapshots", "_streams", "idempotency_keys", "factum_prepare"} {
			if strings.Contains(sql, table) {
				counts[table]++
			}
		}
	}
	for table, want := range map[string]int{"_checkpoints": 3, "_leases": 4, "_snapshots": 8} {
		if counts[table] < want {
			t.Errorf("%d statements on %s sent, want at least %d", counts[table], table, want)
		}
	}

	pc, err := db.Pool().Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	conn := pc.Hijack() // its settings and statements must not go back to the pool
	t.Cleanup(func() { conn.Close(context.Background()) })
	if _, err := conn.Exec(ctx, `SET plan_cache_mode = force_generic_plan`); err != nil {
		t.Fatal(err)
	}
	explained := 0
	for i, sql := range rec.order {
		if !planned(sql) {
			continue
		}
		explained++
		label := firstLine(sql)
		t.Run(fmt.Sprintf("%02d %s", i, label), func(t *testing.T) {
			plan, raw := explainGeneric(t, conn, fmt.Sprintf("every_plan_%d", i), sql, rec.seen[sql])
			defer func() {
				if t.Failed() {
					t.Logf("plan:\n%s", raw)
				}
			}()
			plan.walk(func(n *planNode) {
				switch {
				case n.Type == "Seq Scan" && strings.HasPrefix(n.Relation, "factum_"):
					t.Errorf("the plan scans %s:\n%s", n.Relation, sql)
				case strings.HasPrefix(n.Subplan, "hashed"):
					t.Errorf("the plan hashes a subplan (%s):\n%s", n.Subplan, sql)
				}
			})
		})
	}
	t.Logf("%d statements explained on tables of %d rows", explained, planRows)
}

// statementRecorder is a pgx tracer that keeps every distinct statement
// sent while on, with the arguments of its first use.
type statementRecorder struct {
	on    atomic.Bool
	mu    sync.Mutex
	seen  map[string][]any
	order []string
}

func (r *statementRecorder) TraceQueryStart(ctx context.Context, _ *pgx.Conn, data pgx.TraceQueryStartData) context.Context {
	if !r.on.Load() {
		return ctx
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, ok := r.seen[data.SQL]; !ok {
		r.seen[data.SQL] = append([]any(nil), data.Args...)
		r.order = append(r.order, data.SQL)
	}
	return ctx
}

func (r *statementRecorder) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}

// newTracedTestDB is newTestDB with tracer on every connection of the
// pool (and so of the event store's own connections, which copy its
// configuration), in a schema of its own.
func newTracedTestDB(t *testing.T, tracer pgx.QueryTracer) *DB {
	t.Helper()
	url, schema := servicetest.PostgresSchema(t)
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		t.Fatal(err)
	}
	cfg.ConnConfig.RuntimeParams["search_path"] = schema
	cfg.ConnConfig.Tracer = tracer
	cfg.MaxConns = 8
	pool, err := pgxpool.NewWithConfig(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	d := &DB{pool: pool, schema: schema}
	d.storage = memo.NewStores(d.openers())
	t.Cleanup(d.Close)
	if err := d.init(context.Background()); err != nil {
		t.Fatal(err)
	}
	return d
}

// fillPlanTables writes planRows rows into each table with one INSERT …
// SELECT generate_series per table, creates the snapshot indexes
// SnapshotStore's documentation recommends, and analyzes the tables.
func fillPlanTables(t *testing.T, db *DB, es *EventStore, snaps *SnapshotStore) {
	t.Helper()
	ctx := context.Background()
	started := time.Now()
	// Streams of 50 transactions' worth each (tx values below the
	// server's own, so the log reads find them readable), four per
	// aggregate.
	stmts := []string{
		fmt.Sprintf(`INSERT INTO %s (tx, aggregate, aggregate_id, tenant, version, stream_id, command_id, request_id, owner_id, header, create_time, events)
			SELECT (greatest(3, pg_current_xact_id()::text::bigint - %d) + i / 50)::text::xid8,
				'cart', 'a' || (i / 4), 'default', (i %% 4) + 1, 's' || i, 'c' || i, 'r' || i, '', NULL,
				now() - ((%d - i) || ' ms')::interval, '[]'
			FROM generate_series(0, %d) AS i`, es.table, planRows/50+2, planRows, planRows-1),
		`INSERT INTO ` + snaps.table + ` (aggregate, ` + sqlstore.SnapshotColumns + `)
			SELECT 'cart', 'a' || i, 'default', '', 4, 'e' || i, '', '', 0, 1700000000000 + i, 0, false,
				jsonb_build_object('status', 's' || (i % 1000), 'total', i)
			FROM generate_series(0, ` + fmt.Sprint(planRows-1) + `) AS i`,
		`CREATE INDEX factum_shop_snapshots_status ON factum_shop_snapshots (aggregate,
			(CASE WHEN jsonb_typeof(state -> 'status') = 'string' THEN state -> 'status' #>> '{}' END))`,
		`CREATE INDEX factum_shop_snapshots_status_c ON factum_shop_snapshots (aggregate,
			(CASE WHEN jsonb_typeof(state -> 'status') = 'string' THEN state -> 'status' #>> '{}' END) COLLATE "C")`,
		`CREATE INDEX factum_shop_snapshots_total ON factum_shop_snapshots (aggregate,
			(CASE WHEN jsonb_typeof(state -> 'total') = 'number' THEN (state -> 'total')::float8 END))`,
		`CREATE INDEX factum_shop_snapshots_event_time ON factum_shop_snapshots (aggregate, event_time DESC, aggregate_id)`,
		// Groups of other processors (many contexts share nothing here,
		// but the table's size decides the planner's choice).
		`INSERT INTO ` + sqlstore.ContextTable("shop", "checkpoints") + ` (context, processor, name, tx, seq)
			SELECT 'shop', 'p' || i, '', i, i FROM generate_series(0, ` + fmt.Sprint(planRows-1) + `) AS i`,
		`INSERT INTO ` + sqlstore.ContextTable("shop", "leases") + ` (context, processor, name, holder, token, expires_at)
			SELECT 'shop', 'p' || i, '', 'h', 1, now() - interval '1 hour' FROM generate_series(0, ` + fmt.Sprint(planRows-1) + `) AS i`,
		// Keys of which one in ten expired.
		`INSERT INTO factum_idempotency_keys (tenant, operation, key, state, fingerprint, response, expires_at)
			SELECT 'default', 'POST /x', 'k' || i, 'done', 'f', '\x00', now() + CASE WHEN i % 10 = 0 THEN interval '-1 hour' ELSE interval '1 day' END
			FROM generate_series(0, ` + fmt.Sprint(planRows-1) + `) AS i`,
		`INSERT INTO factum_prepare (name, key, value, expires_at)
			SELECT 'email', 'k' || i, '\x00', CASE WHEN i % 10 = 0 THEN 1 WHEN i % 2 = 0 THEN 9223372036854775807 ELSE 4102444800000 END
			FROM generate_series(0, ` + fmt.Sprint(planRows-1) + `) AS i`,
		`ANALYZE`,
	}
	for _, s := range stmts {
		if _, err := db.Pool().Exec(ctx, s); err != nil {
			t.Fatalf("%v:\n%s", err, s)
		}
	}
	t.Logf("tables filled in %v", time.Since(started).Round(time.Millisecond))
}

// drivePlanPaths calls every method of the consumer and query paths once
// or more, so that each sends its statements.
func drivePlanPaths(t *testing.T, es *EventStore, cps *CheckpointStore, snaps *SnapshotStore, idem *IdempotencyStore, prep *PrepareBackend) {
	t.Helper()
	ctx := context.Background()
	must := func(what string, err error) {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}
	cart := shopCart.WithID("a100")

	// The log: from the start, the middle and the end, and the wait.
	page, err := es.ReadLog(ctx, factum.Position{}, 1000)
	must("read log", err)
	if len(page) == 0 {
		t.Fatal("the log reads empty")
	}
	for _, after := range []factum.Position{page[len(page)-1].Position} {
		_, err := es.ReadLog(ctx, after, 1000)
		must("read log", err)
	}
	wctx, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	_ = es.WaitLog(wctx, factum.Position{Tx: 1 << 62})
	cancel()

	// Aggregate reads.
	_, err = es.Load(ctx, cart, 1, 10)
	must("load", err)
	_, err = es.LoadByTime(ctx, cart, time.Now().Add(-time.Hour), time.Now())
	must("load by time", err)
	_, err = es.RequestExists(ctx, cart, "r400")
	must("request exists", err)
	_, _ = es.Lookup(ctx, cart, "r400")
	_, err = es.ScanAggregateIDs(ctx, shopCart, "a100", 100)
	must("scan", err)

	// Checkpoints and leases, as a leased consumer uses them.
	group := factum.Function{Context: "shop", Processor: "p100"}
	_, err = cps.Checkpoint(ctx, group)
	must("checkpoint", err)
	must("save checkpoint", cps.SaveCheckpoint(ctx, group, factum.Position{Tx: 1 << 40, Seq: 1}))
	lease, err := cps.Acquire(ctx, group, "me", time.Minute)
	must("acquire", err)
	lease, err = cps.Renew(ctx, lease, time.Minute)
	must("renew", err)
	must("fenced save", cps.SaveFencedCheckpoint(ctx, lease, factum.Position{Tx: 1 << 40, Seq: 2}))
	must("release", cps.Release(ctx, lease))

	// Snapshots: save (new, newer, stale: the tenant read), load, and the
	// queries of the query package.
	id := shopCart.WithID("a100")
	for _, v := range []int{5, 6, 3} {
		_, err := snaps.Save(ctx, snapshot.Snapshot{AggregateID: id, Version: v, EventID: "e", State: json.RawMessage(`{"status":"s1","total":1}`)})
		must("snapshot save", err)
	}
	_, err = snaps.Load(ctx, id)
	must("snapshot load", err)
	svc, err := snapshot.NewQueryService(snaps, shopCart, query.Planner{})
	must("query service", err)
	for _, q := range []query.Query{
		{Limit: 20},
		{Condition: query.Eq("aggregateId", "a100")},
		{Condition: query.Eq("state.status", "s7"), Limit: 20},
		{Condition: query.Gt("state.status", "s998"), Limit: 20},
		{Condition: query.Gt("state.total", planRows-6)},
		{Sort: []query.Sort{query.SortDesc("eventTime")}, Limit: 20},
	} {
		_, err := svc.List(ctx, q)
		must(fmt.Sprintf("list %+v", q), err)
	}
	_, err = svc.Count(ctx, query.Eq("state.status", "s7"))
	must("count", err)

	// Idempotency: a claim, its completion, a replay, a claim failed and
	// released, an expired key read, the purge.
	k := idempotency.Key{Tenant: "default", Operation: "POST /x", Value: "new-key"}
	r, _, err := idem.Begin(ctx, k, "f")
	must("begin", err)
	must("complete", idem.Complete(ctx, k, "f", r.Attempt, []byte("ok")))
	_, _, err = idem.Begin(ctx, k, "f")
	must("begin again", err)
	k2 := k
	k2.Value = "other-key"
	r, _, err = idem.Begin(ctx, k2, "f")
	must("begin", err)
	_, err = idem.Renew(ctx, k2, "f", r.Attempt)
	must("renew", err)
	must("fail", idem.Fail(ctx, k2, "f", r.Attempt, true))
	_, _, err = idem.Get(ctx, idempotency.Key{Tenant: "default", Operation: "POST /x", Value: "k10"})
	must("get expired", err)
	_, err = idem.Purge(ctx)
	must("purge", err)

	// Prepare keys.
	exp := time.Now().Add(time.Hour).UnixMilli()
	_, err = prep.Prepare(ctx, "email", "new", []byte("v"), exp)
	must("prepare", err)
	_, _, err = prep.Get(ctx, "email", "new")
	must("get", err)
	_, _, err = prep.Get(ctx, "email", "k10") // lapsed: read again locked
	must("get lapsed", err)
	_, err = prep.Reprepare(ctx, "email", "new", []byte("v"), []byte("w"), exp)
	must("reprepare", err)
	_, err = prep.ChangeKey(ctx, "email", "new", []byte("w"), "newer", []byte("w"), exp)
	must("change key", err)
	_, err = prep.RollbackValue(ctx, "email", "newer", []byte("w"))
	must("rollback value", err)
	_, err = prep.Rollback(ctx, "email", "k11")
	must("rollback", err)
	_, err = prep.Purge(ctx)
	must("purge", err)
}

// planned reports whether sql is a statement the planner plans (not a
// transaction command, a lock, a setting or a function whose body plans
// its own statements).
func planned(sql string) bool {
	s := strings.ToUpper(strings.TrimSpace(sql))
	for _, p := range []string{"SELECT", "INSERT", "UPDATE", "DELETE", "WITH"} {
		if strings.HasPrefix(s, p) {
			return !strings.Contains(s, "SET_CONFIG(") && !strings.Contains(s, "PREPARE_CHANGE_KEY(") &&
				!strings.Contains(s, "CURRENT_SCHEMA()") && !strings.Contains(s, "PG_NAMESPACE")
		}
	}
	return false
}

// explainGeneric prepares sql as name on conn and returns the plan of its
// execution with args, bound client-side as literals, parsed and as
// PostgreSQL wrote it.
func explainGeneric(t *testing.T, conn *pgx.Conn, name, sql string, args []any) (*planNode, []byte) {
	t.Helper()
	ctx := context.Background()
	if _, err := conn.Exec(ctx, `PREPARE `+name+` AS `+sql); err != nil {
		t.Fatalf("prepare: %v\n%s", err, sql)
	}
	t.Cleanup(func() { _, _ = conn.Exec(context.Background(), `DEALLOCATE `+name) })
	params := make([]string, len(args))
	literal := make([]any, len(args))
	for i, a := range args {
		params[i] = fmt.Sprintf("$%d", i+1)
		if b, ok := a.([]byte); ok {
			a = string(b) // a text literal casts to json, jsonb and bytea alike
		}
		literal[i] = a
	}
	var out []byte
	q := `EXPLAIN (FORMAT JSON) EXECUTE ` + name
	if len(params) > 0 {
		q += `(` + strings.Join(params, ", ") + `)`
	}
	if err := conn.QueryRow(ctx, q, append([]any{pgx.QueryExecModeSimpleProtocol}, literal...)...).Scan(&out); err != nil {
		t.Fatalf("explain: %v\n%s", err, sql)
	}
	var plans []struct{ Plan planNode }
	if err := json.Unmarshal(out, &plans); err != nil || len(plans) != 1 {
		t.Fatalf("explain: %v, %s", err, out)
	}
	return &plans[0].Plan, out
}

// firstLine is the start of sql, for a subtest's name.
func firstLine(sql string) string {
	s := strings.Join(strings.Fields(sql), " ")
	if len(s) > 60 {
		s = s[:60]
	}
	return s
}
