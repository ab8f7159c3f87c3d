package projectiontest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/event"
	"github.com/factum-go/factum/eventstore"
	"github.com/factum-go/factum/internal/kit"
	"github.com/factum-go/factum/projection"
)

// builds are the cases of projections with a Schema: blue/green
// rebuilds, version bumps, crashes mid-rebuild, queries and retries.
var builds = []kit.Case[projection.Store]{
	{Name: "RebuildUnderLoadReadsTheOldBuildUntilTheSwitch", Run: rebuildUnderLoad},
	{Name: "CrashesMidRebuildLeaveTheOldOrTheNewBuildLive", Run: crashMidRebuild},
	{Name: "AVersionBumpRebuildsAtStart", Run: versionBump},
	{Name: "ResetAndReplayOfABuild", Run: resetBuild},
	{Name: "QueriesSeeOnlyTheCallersTenant", Run: queriesAreTenantScoped},
	{Name: "QueryParametersAreChecked", Run: queryParameters},
	{Name: "ARetryAppliesAFailedStreamOnce", Run: retryAppliesOnce},
}

// tcounts is the kit's versioned read model: streams seen per tenant and
// aggregate, times the version (so two versions' models differ).
type tcounts struct {
	name string
	// failOn, if set, decides whether to fail (after writing) on a stream.
	failOn func(s *factum.EventStream) bool
	// delay, if set, is slept per stream written into a table: it slows
	// one build down.
	delay func(table string) time.Duration
}

func newTCounts(name string) *tcounts { return &tcounts{name: name} }

func (c *tcounts) projection(t *testing.T, version int) *projection.Projection {
	t.Helper()
	p, err := projection.New("shop", c.name,
		func(ctx context.Context, tx projection.Tx, s *factum.EventStream) error {
			tbl := tx.Table("counts")
			if c.delay != nil {
				time.Sleep(c.delay(tbl))
			}
			if _, err := tx.Exec(ctx, `INSERT INTO `+tbl+` (tenant, aggregate_id, n) VALUES ($1, $2, $3)
				ON CONFLICT (tenant, aggregate_id) DO UPDATE SET n = `+tbl+`.n + $3`,
				s.AggregateID.TenantOrDefault(), s.AggregateID.ID, version); err != nil {
				return err
			}
			if c.failOn != nil && c.failOn(s) {
				return factum.Errorf(factum.CodeIllegalState, "kit: failing on stream %s of %s", s.ID, s.AggregateID.ID)
			}
			return nil
		},
		projection.Events("item_added"),
		projection.Schema(version, "counts"),
		projection.Setup(func(ctx context.Context, tx projection.Tx) error {
			_, err := tx.Exec(ctx, `CREATE TABLE IF NOT EXISTS `+tx.Table("counts")+` (
				tenant TEXT NOT NULL, aggregate_id TEXT NOT NULL, n INTEGER NOT NULL, PRIMARY KEY (tenant, aggregate_id))`)
			return err
		}),
		projection.Query("all", func(q projection.Scope, _ projection.Args) (string, []any, error) {
			return `SELECT aggregate_id, n FROM ` + q.From("counts") + ` ORDER BY aggregate_id`, nil, nil
		}, projection.MaxRows(1000)),
		projection.Query("one", func(q projection.Scope, a projection.Args) (string, []any, error) {
			return `SELECT aggregate_id, n FROM ` + q.From("counts") + ` WHERE aggregate_id = $1`, []any{a.String("id")}, nil
		}, projection.Param("id", projection.String, true)),
		projection.Query("at_least", func(q projection.Scope, a projection.Args) (string, []any, error) {
			return `SELECT aggregate_id, n FROM ` + q.From("counts") + ` WHERE n >= $1 ORDER BY aggregate_id`, []any{a.Int("n")}, nil
		}, projection.Param("n", projection.Int, true), projection.MaxRows(3)),
	)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// all returns the live model of tenant through the query "all", and the
// build that answered.
func all(t *testing.T, r *projection.Runner, tenant string) (map[string]int, projection.Result) {
	t.Helper()
	res, err := r.Query(context.Background(), tenant, "all", nil)
	if err != nil {
		t.Fatalf("query all: %v", err)
	}
	return rowsOf(t, res), res
}

func rowsOf(t *testing.T, res projection.Result) map[string]int {
	t.Helper()
	out := map[string]int{}
	for _, row := range res.Rows {
		n, err := strconv.Atoi(fmt.Sprint(row["n"]))
		if err != nil {
			t.Fatalf("row %v: n is not a number", row)
		}
		out[fmt.Sprint(row["aggregate_id"])] = n
	}
	return out
}

// recompute is the model computed from the whole log in memory: the
// item_added streams per aggregate of tenant, times version.
func recompute(t *testing.T, log event.LogReader, tenant string, version int) map[string]int {
	t.Helper()
	out := map[string]int{}
	var pos factum.Position
	for {
		batch, err := log.ReadLog(context.Background(), pos, 500)
		if err != nil {
			t.Fatal(err)
		}
		if len(batch) == 0 {
			return out
		}
		for _, s := range batch {
			if s.AggregateID.TenantOrDefault() == tenant && s.Events[0].Name == "item_added" {
				out[s.AggregateID.ID] += version
			}
		}
		pos = batch[len(batch)-1].Position
	}
}

func sum(m map[string]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}

// tableExists reports whether the physical table exists in the store.
func tableExists(t *testing.T, st projection.Store, table string) bool {
	t.Helper()
	ctx := context.Background()
	tx, err := st.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = tx.Rollback(ctx) }()
	var n int64
	return tx.QueryRow(ctx, `SELECT count(*) FROM `+table).Scan(&n) == nil
}

func state(t *testing.T, st projection.Store, name string) projection.State {
	t.Helper()
	s, err := st.State(context.Background(), name)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// appendStreams appends n item_added streams over aggs aggregates of
// tenant to log (cart-<i>, prefixed by the tenant but for the default
// one: an aggregate ID is the event store's across tenants).
func appendStreams(t *testing.T, log *eventstore.Memory, tenant string, n, aggs int) {
	t.Helper()
	for i := range n {
		id := cart.WithID(fmt.Sprintf("cart-%d", i%aggs))
		if tenant != "" {
			id = cart.WithID(tenant + "-" + id.ID)
			id.Tenant = tenant
		}
		ver := 1
		if last, err := log.Load(context.Background(), id, 1, eventstore.MaxVersion); err == nil && len(last) > 0 {
			ver = last[len(last)-1].Version + 1
		}
		s := factum.EventStream{
			ID: factum.NewID(), AggregateID: id, Version: ver, CommandID: factum.NewID(),
			RequestID: factum.NewID(), CreateTime: time.Now(),
			Events: []factum.DomainEvent{{ID: factum.NewID(), Name: "item_added", Sequence: 1, IsLast: true, Body: json.RawMessage(`{}`)}},
		}
		if err := log.Append(context.Background(), &s); err != nil {
			t.Fatal(err)
		}
	}
}

// A rebuild while streams keep coming: every read until the switch comes
// from the old build, none shows fewer items than the read before it (no
// half-built model), and after the switch the new build equals the model
// recomputed from the whole log; the old build's tables are dropped.
func rebuildUnderLoad(t *testing.T, st projection.Store) {
	log, _, _ := appendLog(t, 200, 9)
	c := newTCounts("load")
	c.delay = func(table string) time.Duration {
		if strings.Contains(table, "_2_") {
			return 2 * time.Millisecond
		}
		return 0
	}
	p := c.projection(t, 1)
	var sigMu sync.Mutex
	sigs := map[string]int{}
	notify := func(s factum.Signal) {
		sigMu.Lock()
		defer sigMu.Unlock()
		sigs[s.CommandID]++
	}
	r := newRunner(t, p, projection.Config{Log: log, Store: st, BatchSize: 16, Notify: notify})
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	defer func() { cancel(); wg.Wait() }()
	wg.Go(func() { _ = r.Run(ctx) })
	var stop atomic.Bool
	wg.Go(func() {
		for !stop.Load() && ctx.Err() == nil {
			appendStreams(t, log, "", 1, 9)
			time.Sleep(20 * time.Millisecond)
		}
	})
	waitFor(t, "build 1 live and caught up", func() bool {
		s, err := r.Status(context.Background())
		return err == nil && s.Live != nil && s.Live.Number == 1 && s.Live.Lag <= 2
	})
	if err := r.Rebuild(context.Background()); err != nil {
		t.Fatal(err)
	}
	readsOld, last, switched := 0, 0, false
	deadline := time.Now().Add(time.Minute)
	for !switched {
		if time.Now().After(deadline) {
			t.Fatal("the rebuild did not switch within a minute")
		}
		got, res := all(t, r, factum.DefaultTenant)
		switch res.Build {
		case 1:
			readsOld++
		case 2:
			switched = true
		default:
			t.Fatalf("a read from build %d", res.Build)
		}
		if n := sum(got); n < last {
			t.Fatalf("a read from build %d shows %d items after one showed %d", res.Build, n, last)
		} else {
			last = n
		}
		time.Sleep(2 * time.Millisecond)
	}
	if readsOld == 0 {
		t.Error("no read came from the old build during the rebuild")
	}
	for range 20 {
		if _, res := all(t, r, factum.DefaultTenant); res.Build != 2 {
			t.Fatalf("a read from build %d after the switch", res.Build)
		}
	}
	stop.Store(true)
	waitFor(t, "the new build to catch up and the old one to be dropped", func() bool {
		got, _ := all(t, r, factum.DefaultTenant)
		return fmt.Sprint(got) == fmt.Sprint(recompute(t, log, factum.DefaultTenant, 1)) && state(t, st, "load").Retired.IsZero()
	})
	if tableExists(t, st, "proj_shop_load_1_counts") {
		t.Error("the old build's table is still there")
	}
	// Every stream got one PROJECTED signal, across the switch: the
	// build never passes the live one, which signals up to the switch.
	cancel()
	wg.Wait()
	sigMu.Lock()
	defer sigMu.Unlock()
	for pos := (factum.Position{}); ; {
		batch, err := log.ReadLog(context.Background(), pos, 500)
		if err != nil || len(batch) == 0 {
			break
		}
		for _, s := range batch {
			if want := map[bool]int{true: 1}[s.Events[0].Name == "item_added"]; sigs[s.CommandID] != want {
				t.Fatalf("stream %s (%s): %d signals, want %d", s.ID, s.Events[0].Name, sigs[s.CommandID], want)
			}
		}
		pos = batch[len(batch)-1].Position
	}
}

// A runner abandoned at random moments during a rebuild, again and again:
// at every stop the live build is the old or the new one and holds the
// whole (static) log, never a part; at the end the new build is live.
func crashMidRebuild(t *testing.T, st projection.Store) {
	log, _, _ := appendLog(t, 150, 11)
	want := recompute(t, log, factum.DefaultTenant, 1)
	c := newTCounts("crash")
	p := c.projection(t, 1)
	drain(t, newRunner(t, p, projection.Config{Log: log, Store: st}))
	for range 2 { // the second finds the first under way and does nothing
		if err := newRunner(t, p, projection.Config{Log: log, Store: st}).Rebuild(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	if s := state(t, st, "crash"); s.Next.Number != 2 || s.Last != 2 {
		t.Fatalf("after two Rebuilds the state is %+v, want build 2 next", s)
	}
	rng := rand.New(rand.NewPCG(5, 6))
	probe := newRunner(t, p, projection.Config{Log: log, Store: st})
	for round := 0; state(t, st, "crash").Live.Number != 2 || round < 5; round++ {
		if round > 400 {
			t.Fatal("the rebuild did not finish in 400 rounds")
		}
		r := newRunner(t, p, projection.Config{Log: log, Store: st, BatchSize: 1 + rng.IntN(6)})
		// Half the rounds stop after a random number of writes, however
		// slow the machine; the others after a random time, which can
		// land in a switch or a drop too.
		d := time.Duration(rng.IntN(30)) * time.Millisecond
		if round%2 == 0 {
			d = 500 * time.Millisecond
		}
		ctx, cancel := context.WithTimeout(context.Background(), d)
		var writes atomic.Int32
		stopAt := int32(1 + rng.IntN(40))
		c.delay = func(string) time.Duration {
			if round%2 == 0 && writes.Add(1) >= stopAt {
				cancel()
			}
			return 0
		}
		_ = r.Run(ctx)
		cancel()
		s := state(t, st, "crash")
		if s.Live.Number != 1 && s.Live.Number != 2 {
			t.Fatalf("round %d: live build %d", round, s.Live.Number)
		}
		if got, res := all(t, probe, factum.DefaultTenant); fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("round %d: build %d answers %v, want %v", round, res.Build, got, want)
		}
	}
	drain(t, newRunner(t, p, projection.Config{Log: log, Store: st}))
	s := state(t, st, "crash")
	if s.Live.Number != 2 || !s.Next.IsZero() || !s.Retired.IsZero() {
		t.Fatalf("after the rebuild: %+v", s)
	}
	if tableExists(t, st, "proj_shop_crash_1_counts") {
		t.Error("the old build's table is still there")
	}
}

// Deploying version 2 over a live version 1 rebuilds at the next start:
// until the switch, queries read version 1; then version 2, recomputed
// from the whole log, and version 1's tables are gone.
func versionBump(t *testing.T, st projection.Store) {
	log, _, _ := appendLog(t, 60, 5)
	c := newTCounts("bump")
	drain(t, newRunner(t, c.projection(t, 1), projection.Config{Log: log, Store: st}))
	var sigs atomic.Int32
	v2 := newRunner(t, c.projection(t, 2), projection.Config{Log: log, Store: st, Notify: func(factum.Signal) { sigs.Add(1) }})
	if got, res := all(t, v2, factum.DefaultTenant); res.Version != 1 || fmt.Sprint(got) != fmt.Sprint(recompute(t, log, factum.DefaultTenant, 1)) {
		t.Fatalf("before version 2 ran: version %d answers %v", res.Version, got)
	}
	drain(t, v2)
	s := state(t, st, "bump")
	if s.Live.Version != 2 || s.Live.Number != 2 || !s.Retired.IsZero() {
		t.Fatalf("after version 2 ran: %+v", s)
	}
	if got, res := all(t, v2, factum.DefaultTenant); res.Version != 2 || fmt.Sprint(got) != fmt.Sprint(recompute(t, log, factum.DefaultTenant, 2)) {
		t.Fatalf("version %d answers %v, want version 2's", res.Version, got)
	}
	if tableExists(t, st, "proj_shop_bump_1_counts") {
		t.Error("version 1's table is still there")
	}
	if sigs.Load() == 0 {
		t.Error("a version bump's build sent no PROJECTED signals (no live build runs meanwhile)")
	}
	// A lower version (an instance left behind in a rolling deploy) does
	// not rebuild by itself; going back to it is an operator's Rebuild,
	// into one more build, not a reuse.
	v1 := newRunner(t, c.projection(t, 1), projection.Config{Log: log, Store: st})
	drain(t, v1)
	if s := state(t, st, "bump"); s.Live.Version != 2 || !s.Next.IsZero() {
		t.Fatalf("after version 1 ran again: %+v, want version 2 live and no build", s)
	}
	if err := v1.Rebuild(context.Background()); err != nil {
		t.Fatal(err)
	}
	drain(t, v1)
	if s := state(t, st, "bump"); s.Live.Version != 1 || s.Live.Number != 3 {
		t.Fatalf("after version 1's Rebuild: %+v", s)
	}
}

// ResetAndReplay of a projection with a Schema drops and sets up the live
// build's tables and replays into them.
func resetBuild(t *testing.T, st projection.Store) {
	log, _, _ := appendLog(t, 40, 4)
	c := newTCounts("reset")
	p := c.projection(t, 1)
	drain(t, newRunner(t, p, projection.Config{Log: log, Store: st}))
	r := newRunner(t, p, projection.Config{Log: log, Store: st})
	if err := r.ResetAndReplay(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got, _ := all(t, r, factum.DefaultTenant); len(got) != 0 {
		t.Fatalf("after the reset: %v", got)
	}
	drain(t, r)
	if got, res := all(t, r, factum.DefaultTenant); res.Build != 1 || fmt.Sprint(got) != fmt.Sprint(recompute(t, log, factum.DefaultTenant, 1)) {
		t.Fatalf("after the replay: build %d answers %v", res.Build, got)
	}
}

// A query sees only its caller's tenant's rows, whatever its parameters.
func queriesAreTenantScoped(t *testing.T, st projection.Store) {
	log := eventstore.NewMemory()
	for _, tenant := range []string{"acme", "globex", ""} {
		appendStreams(t, log, tenant, 12, 3)
	}
	appendStreams(t, log, "acme", 4, 4) // acme alone has a cart-3
	c := newTCounts("tenants")
	r := newRunner(t, c.projection(t, 1), projection.Config{Log: log, Store: st})
	drain(t, r)
	for _, tenant := range []string{"acme", "globex", factum.DefaultTenant, "nobody"} {
		got, _ := all(t, r, tenant)
		if want := recompute(t, log, tenant, 1); fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("tenant %s sees %v, want %v", tenant, got, want)
		}
	}
	for _, id := range []string{"acme-cart-3", "acme-cart-0", "cart-0", "acme-cart-0' OR '1'='1", "x' OR tenant <> 'globex"} {
		res, err := r.Query(context.Background(), "globex", "one", map[string]string{"id": id})
		if err != nil || len(res.Rows) != 0 {
			t.Errorf("globex asking for %q: %v, %v; want no rows", id, res.Rows, err)
		}
	}
	for _, tenant := range []string{"ac'me", `ac\me`} {
		if _, err := r.Query(context.Background(), tenant, "all", nil); !errors.Is(err, factum.ErrIllegalArgument) {
			t.Errorf("tenant %q: %v, want IllegalArgument", tenant, err)
		}
	}
}

// Parameters are parsed to their types; bad input is IllegalArgument, an
// unknown query NotFound, and the row limit cuts the result.
func queryParameters(t *testing.T, st projection.Store) {
	log, _, _ := appendLog(t, 40, 8)
	c := newTCounts("params")
	r := newRunner(t, c.projection(t, 1), projection.Config{Log: log, Store: st})
	drain(t, r)
	ctx := context.Background()
	for _, tc := range []struct {
		query string
		raw   map[string]string
		want  error
	}{
		{"one", nil, factum.ErrIllegalArgument},                                         // missing required
		{"one", map[string]string{"id": "cart-1", "x": "1"}, factum.ErrIllegalArgument}, // unknown
		{"at_least", map[string]string{"n": "two"}, factum.ErrIllegalArgument},          // not an integer
		{"at_least", map[string]string{"n": "1", "limit": "4"}, factum.ErrIllegalArgument},
		{"at_least", map[string]string{"n": "1", "limit": "0"}, factum.ErrIllegalArgument},
		{"none", nil, factum.ErrNotFound},
	} {
		if _, err := r.Query(ctx, factum.DefaultTenant, tc.query, tc.raw); !errors.Is(err, tc.want) {
			t.Errorf("%s %v: %v, want %v", tc.query, tc.raw, err, tc.want)
		}
	}
	res, err := r.Query(ctx, factum.DefaultTenant, "at_least", map[string]string{"n": "1"})
	if err != nil || len(res.Rows) != 3 || !res.Truncated {
		t.Errorf("at_least 1 (8 rows, MaxRows 3): %d rows, truncated %v, %v", len(res.Rows), res.Truncated, err)
	}
	res, err = r.Query(ctx, factum.DefaultTenant, "at_least", map[string]string{"n": "1", "limit": "2"})
	if err != nil || len(res.Rows) != 2 || !res.Truncated {
		t.Errorf("at_least 1 limit 2: %d rows, truncated %v, %v", len(res.Rows), res.Truncated, err)
	}
	res, err = r.Query(ctx, factum.DefaultTenant, "one", map[string]string{"id": "cart-1"})
	if err != nil || len(res.Rows) != 1 || res.Truncated {
		t.Errorf("one cart-1: %v, truncated %v, %v", res.Rows, res.Truncated, err)
	}
}

// A stream passed as failed is applied by Retry once, in a transaction of
// its own, and the checkpoint does not move; a second Retry, or one of a
// stream that never failed, does nothing.
func retryAppliesOnce(t *testing.T, st projection.Store) {
	log, _, allStreams := appendLog(t, 20, 4)
	bad := allStreams[9]
	var failing atomic.Bool
	failing.Store(true)
	c := newTCounts("retry")
	c.failOn = func(s *factum.EventStream) bool { return failing.Load() && s.ID == bad.ID }
	var recorded atomic.Int32
	rec := event.FailureRecorderFunc(func(context.Context, event.Failure) error { recorded.Add(1); return nil })
	p := c.projection(t, 1)
	r := newRunner(t, p, projection.Config{Log: log, Store: st, Failures: rec, Attempts: 1})
	drain(t, r)
	want := recompute(t, log, factum.DefaultTenant, 1)
	want[bad.AggregateID.ID]--
	if got, _ := all(t, r, factum.DefaultTenant); recorded.Load() != 1 || fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("after the failure (%d recorded): %v, want %v", recorded.Load(), got, want)
	}
	before, err := r.Status(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Retry(context.Background(), &bad); err == nil {
		t.Fatal("a retry while the function still fails succeeded")
	}
	failing.Store(false)
	for range 2 {
		if err := r.Retry(context.Background(), &bad); err != nil {
			t.Fatal(err)
		}
	}
	if err := r.Retry(context.Background(), &allStreams[3]); err != nil {
		t.Fatal(err)
	}
	want[bad.AggregateID.ID]++
	if got, _ := all(t, r, factum.DefaultTenant); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("after the retries: %v, want %v (the failed stream once)", got, want)
	}
	after, err := r.Status(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if after.Live.Checkpoint != before.Live.Checkpoint {
		t.Errorf("the retry moved the checkpoint from %v to %v", before.Live.Checkpoint, after.Live.Checkpoint)
	}
}

// waitFor polls cond until it holds, for at most a minute.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(time.Minute); !cond(); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("waited a minute for %s", what)
		}
	}
}
