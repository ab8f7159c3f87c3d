package snapshottest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/event"
	"github.com/factum-go/factum/internal/kit"
	"github.com/factum-go/factum/query"
	"github.com/factum-go/factum/query/querytest"
	"github.com/factum-go/factum/snapshot"
)

// Plain returns b with every optional fast path hidden: the methods of
// snapshot.Backend alone, so that a front end over it takes every generic
// fallback.
func Plain(b snapshot.Backend) snapshot.Backend { return plain{b} }

// plain is Plain's backend.
type plain struct{ b snapshot.Backend }

func (p plain) Save(ctx context.Context, s snapshot.Snapshot) (snapshot.Outcome, error) {
	return p.b.Save(ctx, s)
}

func (p plain) Load(ctx context.Context, id factum.AggregateID) (snapshot.Snapshot, bool, error) {
	return p.b.Load(ctx, id)
}

func (p plain) Scan(ctx context.Context, named factum.NamedAggregate, afterID string, limit int) ([]snapshot.Snapshot, error) {
	return p.b.Scan(ctx, named, afterID, limit)
}

// batchSaver and checkpointBatchSaver are the batch saves a front end
// forwards (the snapshotter's BatchSaver and CheckpointBatchSaver).
type (
	batchSaver interface {
		SaveBatch(ctx context.Context, snaps []snapshot.Snapshot) ([]bool, error)
	}
	checkpointBatchSaver interface {
		SaveBatchAt(ctx context.Context, snaps []snapshot.Snapshot, checkpoints event.CheckpointStore, group factum.Function, pos factum.Position) ([]bool, bool, error)
	}
)

// testFastPaths holds each optional fast path of the store's backend (a
// store that is a snapshot.Front, or embeds one) to its fallback, as
// testing/fstest holds ReadFileFS to Open: queries (Finder) to a front
// end over the backend with its fast paths hidden, which must answer the
// whole query corpus alike, and batch saves to Save one snapshot at a
// time.
func testFastPaths(t *testing.T, st snapshot.Store) {
	fb, ok := st.(interface{ Backend() snapshot.Backend })
	if !ok {
		t.Skip("the store is not a snapshot front end: no backend to compare")
	}
	b := fb.Backend()
	_, finder := b.(snapshot.Finder)
	_, batch := st.(batchSaver)
	_, at := st.(checkpointBatchSaver)
	t.Logf("fast paths: Finder %v, SaveBatch %v, SaveBatchAt %v", finder, batch, at)
	t.Run("Finder", func(t *testing.T) { testFinder(t, st, b) })
	if batch {
		t.Run("SaveBatch", func(t *testing.T) {
			testBatch(t, st, func(ctx context.Context, snaps []snapshot.Snapshot) ([]bool, error) {
				return st.(batchSaver).SaveBatch(ctx, snaps)
			})
		})
	}
	if at {
		t.Run("SaveBatchAt", func(t *testing.T) {
			testBatch(t, st, func(ctx context.Context, snaps []snapshot.Snapshot) ([]bool, error) {
				saved, checkpointed, err := st.(checkpointBatchSaver).SaveBatchAt(ctx, snaps, nil, factum.Function{}, factum.Position{})
				if checkpointed {
					return nil, errors.New("SaveBatchAt without a checkpoint store reports checkpointed")
				}
				return saved, err
			})
		})
	}
}

// testFinder runs the query corpus through a query service over the store
// and one over the fallback, and fails on any difference; the fallback
// must also answer as the corpus expects.
func testFinder(t *testing.T, st snapshot.Store, b snapshot.Backend) {
	qs, ok := st.(snapshot.QueryStore)
	if !ok {
		t.Fatalf("%T is a front end but no snapshot.QueryStore", st)
	}
	slow, err := snapshot.New(plain{b}, snapshot.Config{})
	if err != nil {
		t.Fatal(err)
	}
	f := newFixture(t)
	data := querytest.Dataset()
	fast := evaluator{loadCorpus(t, qs, f, data)}
	fall, err := snapshot.NewQueryService(slow, f.Named, query.Planner{Now: func() time.Time { return data.Now }, Location: data.Location})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for _, c := range querytest.Cases() {
		if err := querytest.Check(ctx, evaluator{fall}, c); err != nil {
			t.Errorf("the fallback: %v", err)
		}
		a, aerr := answer(ctx, fast, c)
		b, berr := answer(ctx, evaluator{fall}, c)
		switch {
		case factum.CodeOf(aerr) != factum.CodeOf(berr) || (aerr == nil) != (berr == nil):
			t.Errorf("%s: fast path error %v, fallback %v", c.Name, aerr, berr)
		case aerr == nil && !kit.JSONEqual(a, b):
			t.Errorf("%s: fast path %s, fallback %s", c.Name, a, b)
		}
	}
	// An aggregate type without snapshots, and a plan no store accepts.
	empty := f.other()
	if got, err := slow.Find(ctx, empty, query.Plan{Condition: query.All(), Limit: 10}); err != nil || len(got) != 0 {
		t.Errorf("fallback Find of an empty type: %v, %v", got, err)
	}
	if n, err := slow.Count(ctx, empty, query.All()); err != nil || n != 0 {
		t.Errorf("fallback Count of an empty type: %d, %v", n, err)
	}
	bad := query.Plan{Condition: query.Eq("nosuchfield", 1), Limit: 10}
	_, aerr := qs.Find(ctx, f.Named, bad)
	_, berr := slow.Find(ctx, f.Named, bad)
	if (aerr == nil) != (berr == nil) || factum.CodeOf(aerr) != factum.CodeOf(berr) {
		t.Errorf("a plan on an unknown field: fast path %v, fallback %v", aerr, berr)
	}
}

// answer is c's result through ev as JSON.
func answer(ctx context.Context, ev evaluator, c querytest.Case) ([]byte, error) {
	var v any
	var err error
	switch c.Kind {
	case querytest.KindList:
		v, err = ev.List(ctx, c.Query)
	case querytest.KindPaged:
		v, err = ev.Paged(ctx, c.Paged)
	case querytest.KindCount:
		v, err = ev.Count(ctx, c.Condition)
	case querytest.KindSingle:
		v, err = ev.Single(ctx, c.Query)
	default:
		return nil, fmt.Errorf("case %s: unknown kind %v", c.Name, c.Kind)
	}
	if err != nil {
		return nil, err
	}
	return json.Marshal(v)
}

// testBatch saves the same rounds of snapshots by batch into one aggregate
// type and by Save, one at a time, into another: the batch must report
// what the saves report (a TenantMismatch refusal as false), leave the
// same snapshots stored, and save nothing of a batch it refuses.
func testBatch(t *testing.T, st snapshot.Store, saveBatch func(context.Context, []snapshot.Snapshot) ([]bool, error)) {
	ctx := context.Background()
	f := newFixture(t)
	fastType, slowType := f.Named, f.other()
	as := func(named factum.NamedAggregate, s snapshot.Snapshot) snapshot.Snapshot {
		s.AggregateID.NamedAggregate = named
		return s
	}
	at := func(id string, tenant string, v int) snapshot.Snapshot {
		s := snap(factum.AggregateID{ID: id, Tenant: tenant}, v)
		s.State = json.RawMessage(fmt.Sprintf(`{"round":%d,"tenant":%q}`, v, tenant))
		return s
	}
	rounds := [][]snapshot.Snapshot{
		{at("a", "", 1), at("b", "tenant-b", 2), at("c", "", 5)},
		{at("a", "", 3), at("b", "", 3), at("c", "", 4), at("d", "tenant-d", 1)},         // newer, other tenant, stale, new
		{at("a", "", 3), at("b", "tenant-b", 2), at("c", "", 6), at("d", "tenant-d", 1)}, // repair, repair, newer, repair
		{},
	}
	for r, round := range rounds {
		fast := make([]snapshot.Snapshot, len(round))
		want := make([]bool, len(round))
		for i, s := range round {
			fast[i] = as(fastType, s)
			saved, err := st.Save(ctx, as(slowType, s))
			switch {
			case err != nil && factum.CodeOf(err) == factum.CodeTenantMismatch:
			case err != nil:
				t.Fatalf("round %d: Save %s v%d: %v", r, s.AggregateID.ID, s.Version, err)
			}
			want[i] = saved
		}
		got, err := saveBatch(ctx, fast)
		if err != nil {
			t.Fatalf("round %d: batch: %v", r, err)
		}
		if len(got) != len(want) {
			t.Fatalf("round %d: batch reports %d snapshots of %d", r, len(got), len(want))
		}
		for i := range want {
			if got[i] != want[i] {
				t.Errorf("round %d: %s v%d: batch saved %v, Save %v", r, round[i].AggregateID.ID, round[i].Version, got[i], want[i])
			}
		}
	}
	for _, id := range []string{"a", "b", "c", "d"} {
		for _, tenant := range []string{"", "tenant-b", "tenant-d"} {
			fastSnap, ferr := st.Load(ctx, factum.AggregateID{NamedAggregate: fastType, ID: id, Tenant: tenant})
			slowSnap, serr := st.Load(ctx, factum.AggregateID{NamedAggregate: slowType, ID: id, Tenant: tenant})
			if factum.CodeOf(ferr) != factum.CodeOf(serr) || (ferr == nil) != (serr == nil) {
				t.Fatalf("load %s of %q: batch-saved %v, saved one by one %v", id, tenant, ferr, serr)
			}
			if ferr == nil {
				same(t, fastSnap, as(fastType, slowSnap))
			}
		}
	}
	// A batch with one invalid snapshot is refused whole.
	refused := []snapshot.Snapshot{as(fastType, at("e", "", 1)), as(fastType, at("f", "", 0))}
	if _, err := saveBatch(ctx, refused); factum.CodeOf(err) != factum.CodeIllegalArgument {
		t.Fatalf("a batch with version 0: %v, want IllegalArgument", err)
	}
	if _, err := st.Load(ctx, fastType.WithID("e")); factum.CodeOf(err) != factum.CodeNotFound {
		t.Fatalf("the refused batch saved its valid snapshot: %v", err)
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := saveBatch(cctx, []snapshot.Snapshot{as(fastType, at("g", "", 1))}); !errors.Is(err, context.Canceled) {
		t.Fatalf("a batch on a cancelled context: %v, want context.Canceled", err)
	}
}
