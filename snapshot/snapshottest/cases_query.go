package snapshottest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/internal/kit"
	"github.com/factum-go/factum/query"
	"github.com/factum-go/factum/query/querytest"
	"github.com/factum-go/factum/snapshot"
)

// evaluator runs the query corpus through a query service.
type evaluator struct{ svc *snapshot.QueryService }

func (e evaluator) Single(ctx context.Context, q query.Query) (query.Document, error) {
	return e.svc.SingleDocument(ctx, q)
}

func (e evaluator) List(ctx context.Context, q query.Query) ([]query.Document, error) {
	return e.svc.ListDocuments(ctx, q)
}

func (e evaluator) Paged(ctx context.Context, q query.PagedQuery) (query.Paged[query.Document], error) {
	return e.svc.PagedDocuments(ctx, q)
}

func (e evaluator) Count(ctx context.Context, c query.Condition) (int64, error) {
	return e.svc.Count(ctx, c)
}

// loadCorpus saves the corpus data set as snapshots of the fixture's
// aggregate type and returns a query service over them, planned with the
// corpus clock.
func loadCorpus(t *testing.T, st snapshot.QueryStore, f fixture, data querytest.Data) *snapshot.QueryService {
	t.Helper()
	for _, raw := range data.JSON {
		var s snapshot.Snapshot
		if err := json.Unmarshal(raw, &s); err != nil {
			t.Fatalf("corpus document is not a snapshot: %v", err)
		}
		s.AggregateID.NamedAggregate = f.Named
		mustSave(t, st, s)
	}
	svc, err := snapshot.NewQueryService(st, f.Named, query.Planner{
		Now:      func() time.Time { return data.Now },
		Location: data.Location,
	})
	if err != nil {
		t.Fatal(err)
	}
	return svc
}

func testQueryCorpus(t *testing.T, st snapshot.QueryStore) {
	f := newFixture(t)
	querytest.Run(t, func(t *testing.T, data querytest.Data) querytest.Evaluator {
		return evaluator{loadCorpus(t, st, f, data)}
	})
}

func ids(snaps []snapshot.Snapshot) []string {
	out := make([]string, len(snaps))
	for i, s := range snaps {
		out[i] = s.AggregateID.ID
	}
	return out
}

func testQueryTyped(t *testing.T, st snapshot.QueryStore) {
	f := newFixture(t)
	svc := loadCorpus(t, st, f, querytest.Dataset())
	ctx := context.Background()
	list, err := svc.List(ctx, query.Query{Condition: query.IDs("d03", "d01", "d17"), Sort: []query.Sort{query.SortDesc("version")}})
	if err != nil {
		t.Fatal(err)
	}
	if got := ids(list); !slices.Equal(got, []string{"d03", "d01"}) {
		t.Fatalf("List IDs = %v, want [d03 d01]", got)
	}
	for _, s := range list {
		same(t, s, mustLoad(t, st, s.AggregateID))
	}
	one, err := svc.Single(ctx, query.Query{
		Condition:  query.ID("d05"),
		Projection: query.Projection{Include: []string{"state.name", "version"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if one.AggregateID != f.Named.WithID("d05").WithTenant("") || one.Version != 5 || one.OwnerID != "" || one.EventID != "" ||
		!one.EventTime.IsZero() || !kit.JSONEqual(one.State, []byte(`{"name":"Delta"}`)) {
		t.Errorf("projected Single = %+v (state %s)", one, one.State)
	}
	page, err := svc.Paged(ctx, query.PagedQuery{Condition: query.Tenant("t2"), Pagination: query.Pagination{Index: 2, Size: 4}})
	if err != nil {
		t.Fatal(err)
	}
	if page.Total != 6 || !slices.Equal(ids(page.List), []string{"d14", "d16"}) {
		t.Errorf("Paged = total %d %v, want 6 [d14 d16]", page.Total, ids(page.List))
	}
	_, err = svc.Single(ctx, query.Query{Condition: query.ID("nobody")})
	kit.WantCode(t, err, factum.CodeNotFound)
	_, err = svc.List(ctx, query.Query{Limit: -1})
	kit.WantCode(t, err, factum.CodeIllegalArgument)
}

func testQueryState(t *testing.T, st snapshot.QueryStore) {
	f := newFixture(t)
	svc := loadCorpus(t, st, f, querytest.Dataset())
	ctx := context.Background()
	states, err := svc.ListState(ctx, query.Query{Condition: query.IDs("d01", "d13")})
	if err != nil {
		t.Fatal(err)
	}
	if len(states) != 2 {
		t.Fatalf("ListState returned %d states, want 2", len(states))
	}
	for i, id := range []string{"d01", "d13"} {
		if want := mustLoad(t, st, f.Named.WithID(id).WithTenant("t1")).State; !kit.JSONEqual(states[i], want) {
			t.Errorf("state %d = %s, want %s", i, states[i], want)
		}
	}
	st1, err := svc.SingleState(ctx, query.Query{Condition: query.ID("d02"), Projection: query.Projection{Include: []string{"state.name", "state.note"}}})
	if err != nil || !kit.JSONEqual(st1, []byte(`{"name":"alpha","note":null}`)) {
		t.Errorf("projected SingleState = %s, %v", st1, err)
	}
	st2, err := svc.SingleState(ctx, query.Query{Condition: query.ID("d02"), Projection: query.Projection{Exclude: []string{"state"}}})
	if err != nil || string(st2) != "null" {
		t.Errorf("SingleState without state = %s, %v; want null", st2, err)
	}
	page, err := svc.PagedState(ctx, query.PagedQuery{
		Condition:  query.Deleted(query.DeletedOnly),
		Projection: query.Projection{Include: []string{"state.price"}},
	})
	if err != nil || page.Total != 2 || len(page.List) != 2 || !kit.JSONEqual(page.List[1], []byte(`{"price":50}`)) {
		t.Errorf("PagedState = %+v, %v", page, err)
	}
	_, err = svc.SingleState(ctx, query.Query{Condition: query.Eq("state.name", "nobody")})
	kit.WantCode(t, err, factum.CodeNotFound)
}

func testQueryTenant(t *testing.T, st snapshot.QueryStore) {
	f := newFixture(t)
	svc := loadCorpus(t, st, f, querytest.Dataset())
	ctx := context.Background()
	t2, err := svc.ForTenant("t2")
	if err != nil {
		t.Fatal(err)
	}
	if t2.Tenant() != "t2" || svc.Tenant() != "" {
		t.Fatalf("tenants %q and %q, want t2 and unscoped", t2.Tenant(), svc.Tenant())
	}
	for _, c := range []query.Condition{query.All(), query.Tenant("t1"), query.Or(query.Tenant("t1"), query.Tenant("t2")), query.Deleted(query.AnyDeletion)} {
		docs, err := t2.ListDocuments(ctx, query.Query{Condition: c})
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range docs {
			if d["tenantId"] != "t2" {
				t.Errorf("tenant t2 service returned %v of tenant %v for %+v", d["aggregateId"], d["tenantId"], c)
			}
		}
	}
	if n, err := t2.Count(ctx, query.All()); err != nil || n != 6 {
		t.Errorf("t2 count = %d, %v; want 6", n, err)
	}
	if _, err := t2.Single(ctx, query.Query{Condition: query.ID("d01")}); !errors.Is(err, factum.ErrNotFound) {
		t.Errorf("t2 Single of t1's d01: %v, want NotFound", err)
	}
	def, err := svc.ForTenant("")
	if err != nil {
		t.Fatal(err)
	}
	if n, err := def.Count(ctx, query.All()); err != nil || n != 0 {
		t.Errorf("default tenant count = %d, %v; want 0", n, err)
	}
	_, err = svc.ForTenant("bad/tenant")
	kit.WantCode(t, err, factum.CodeIllegalArgument)
}

func testQueryTypesSeparate(t *testing.T, st snapshot.QueryStore) {
	f := newFixture(t)
	mustSave(t, st, snap(f.ID("mine"), 1))
	mustSave(t, st, snap(f.other().WithID("theirs"), 1))
	svc, err := snapshot.NewQueryService(st, f.Named, query.Planner{})
	if err != nil {
		t.Fatal(err)
	}
	list, err := svc.List(context.Background(), query.Query{})
	if err != nil {
		t.Fatal(err)
	}
	if got := ids(list); !slices.Equal(got, []string{"mine"}) {
		t.Errorf("query over one aggregate type returned %v", got)
	}
	empty, err := snapshot.NewQueryService(st, factum.NamedAggregate{Context: "kit", Aggregate: f.Named.Aggregate + "_none"}, query.Planner{})
	if err != nil {
		t.Fatal(err)
	}
	if n, err := empty.Count(context.Background(), query.All()); err != nil || n != 0 {
		t.Errorf("count over a type with no snapshots = %d, %v", n, err)
	}
	if list, err := empty.List(context.Background(), query.Query{}); err != nil || len(list) != 0 {
		t.Errorf("list over a type with no snapshots = %v, %v", list, err)
	}
	if _, err := empty.List(context.Background(), query.Query{Limit: 1_000_000}); !errors.Is(err, factum.ErrIllegalArgument) {
		t.Errorf("guards apply over an empty type: %v", err)
	}
	if _, err := snapshot.NewQueryService(st, factum.NamedAggregate{Context: "bad context"}, query.Planner{}); !errors.Is(err, factum.ErrIllegalArgument) {
		t.Errorf("NewQueryService with a bad type: %v", err)
	}
}

// testQueryLatest is the read-after-write the SNAPSHOT stage promises:
// once a save returns, queries see that version and no older one.
func testQueryLatest(t *testing.T, st snapshot.QueryStore) {
	f := newFixture(t)
	svc, err := snapshot.NewQueryService(st, f.Named, query.Planner{})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	id := f.ID("moving")
	for v := 1; v <= 20; v++ {
		mustSave(t, st, snap(id, v))
		got, err := svc.Single(ctx, query.Query{Condition: query.Eq("state.version", v)})
		if err != nil {
			t.Fatalf("after saving v%d: %v", v, err)
		}
		if got.Version != v {
			t.Fatalf("after saving v%d the query found v%d", v, got.Version)
		}
		if n, _ := svc.Count(ctx, query.Lt("state.version", v)); n != 0 {
			t.Fatalf("after saving v%d, %d snapshots of older versions still match", v, n)
		}
	}
	mustSave(t, st, snap(id, 3))
	if n, _ := svc.Count(ctx, query.Eq("state.version", 20)); n != 1 {
		t.Fatal("a stale save changed what queries see")
	}
}

// testQueryWhileSaving runs queries while goroutines save new versions:
// every result is a consistent snapshot and no aggregate goes back.
func testQueryWhileSaving(t *testing.T, st snapshot.QueryStore) {
	f := newFixture(t)
	svc, err := snapshot.NewQueryService(st, f.Named, query.Planner{})
	if err != nil {
		t.Fatal(err)
	}
	const aggregates, versions = 10, 40
	ctx := context.Background()
	var wg sync.WaitGroup
	errs := make(chan error, aggregates+4)
	for a := range aggregates {
		id := f.ID(fmt.Sprintf("live-%02d", a))
		wg.Go(func() {
			for v := 1; v <= versions; v++ {
				if _, err := st.Save(ctx, snap(id, v)); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	for range 2 {
		wg.Go(func() {
			last := map[string]int{}
			for range versions {
				list, err := svc.List(ctx, query.Query{Condition: query.Gte("state.version", 1), Sort: []query.Sort{query.SortDesc("version")}})
				if err != nil {
					errs <- err
					return
				}
				if len(list) > aggregates {
					errs <- fmt.Errorf("%d results for %d aggregates", len(list), aggregates)
					return
				}
				for i, s := range list {
					if i > 0 && s.Version > list[i-1].Version {
						errs <- fmt.Errorf("results out of version order: %v", ids(list))
						return
					}
					if !kit.JSONEqual(s.State, snap(s.AggregateID, s.Version).State) {
						errs <- fmt.Errorf("%s v%d has the state %s", s.AggregateID.ID, s.Version, s.State)
						return
					}
					if s.Version < last[s.AggregateID.ID] {
						errs <- fmt.Errorf("%s went back from v%d to v%d", s.AggregateID.ID, last[s.AggregateID.ID], s.Version)
						return
					}
					last[s.AggregateID.ID] = s.Version
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if n, err := svc.Count(ctx, query.Eq("version", versions)); err != nil || n != aggregates {
		t.Errorf("after the saves, %d aggregates at v%d (%v), want %d", n, versions, err, aggregates)
	}
}

func testQueryCancelled(t *testing.T, st snapshot.QueryStore) {
	f := newFixture(t)
	mustSave(t, st, snap(f.ID("x"), 1))
	svc, err := snapshot.NewQueryService(st, f.Named, query.Planner{})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := svc.List(ctx, query.Query{}); !errors.Is(err, context.Canceled) {
		t.Errorf("List with a cancelled context: %v", err)
	}
	if _, err := svc.Count(ctx, query.All()); !errors.Is(err, context.Canceled) {
		t.Errorf("Count with a cancelled context: %v", err)
	}
	if _, err := svc.Paged(ctx, query.PagedQuery{}); !errors.Is(err, context.Canceled) {
		t.Errorf("Paged with a cancelled context: %v", err)
	}
}
