package snapshottest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/internal/kit"
	"github.com/factum-go/factum/snapshot"
)

func mustSave(t *testing.T, st snapshot.Store, s snapshot.Snapshot) bool {
	t.Helper()
	saved, err := st.Save(context.Background(), s)
	if err != nil {
		t.Fatalf("save %s v%d: %v", s.AggregateID, s.Version, err)
	}
	return saved
}

func mustLoad(t *testing.T, st snapshot.Store, id factum.AggregateID) snapshot.Snapshot {
	t.Helper()
	got, err := st.Load(context.Background(), id)
	if err != nil {
		t.Fatalf("load %s: %v", id, err)
	}
	return got
}

func testRoundTrip(t *testing.T, st snapshot.Store) {
	f := newFixture(t)
	s := snap(f.ID("round-trip").WithTenant("tenant-a"), 3)
	s.Deleted = true
	s.State = json.RawMessage(`{"text":"héllo \"quoted\"","n":12.5,"big":9007199254740993,"list":[1,{"x":null}],"empty":{}}`)
	if !mustSave(t, st, s) {
		t.Fatal("first save reported not saved")
	}
	got := mustLoad(t, st, s.AggregateID)
	same(t, got, s)
	if got.EventTime.Nanosecond()%int(time.Millisecond) != 0 {
		t.Errorf("event time %v keeps sub-millisecond digits", got.EventTime)
	}
	// Zero times stay zero, a scalar state is a state.
	z := snapshot.Snapshot{AggregateID: f.ID("zero"), Version: 1, State: json.RawMessage(`42`)}
	mustSave(t, st, z)
	got = mustLoad(t, st, z.AggregateID)
	same(t, got, z)
	if !got.FirstEventTime.IsZero() || !got.EventTime.IsZero() || !got.SnapshotTime.IsZero() {
		t.Errorf("zero times came back as %v %v %v", got.FirstEventTime, got.EventTime, got.SnapshotTime)
	}
}

func testDefaultTenant(t *testing.T, st snapshot.Store) {
	f := newFixture(t)
	id := f.ID("default")
	id.Tenant = ""
	mustSave(t, st, snap(id, 1))
	got := mustLoad(t, st, id)
	if got.AggregateID.Tenant != factum.DefaultTenant {
		t.Errorf("tenant = %q, want %q stored explicitly", got.AggregateID.Tenant, factum.DefaultTenant)
	}
	got = mustLoad(t, st, id.WithTenant(factum.DefaultTenant))
	if got.Version != 1 {
		t.Errorf("load by explicit default tenant: version %d", got.Version)
	}
}

func testInvalid(t *testing.T, st snapshot.Store) {
	f := newFixture(t)
	id := f.ID("invalid")
	cases := []struct {
		name   string
		mutate func(*snapshot.Snapshot)
	}{
		{"version zero", func(s *snapshot.Snapshot) { s.Version = 0 }},
		{"negative version", func(s *snapshot.Snapshot) { s.Version = -1 }},
		{"empty aggregate id", func(s *snapshot.Snapshot) { s.AggregateID.ID = "" }},
		{"bad aggregate name", func(s *snapshot.Snapshot) { s.AggregateID.Aggregate = "has space" }},
		{"bad tenant", func(s *snapshot.Snapshot) { s.AggregateID.Tenant = "a/b" }},
		{"empty state", func(s *snapshot.Snapshot) { s.State = nil }},
		{"state not json", func(s *snapshot.Snapshot) { s.State = json.RawMessage(`{nope`) }},
		{"oversized event id", func(s *snapshot.Snapshot) { s.EventID = strings.Repeat("e", factum.MaxIDLen+1) }},
		{"oversized operator", func(s *snapshot.Snapshot) { s.Operator = strings.Repeat("o", snapshot.MaxOperatorLen+1) }},
		{"oversized owner", func(s *snapshot.Snapshot) { s.OwnerID = strings.Repeat("o", snapshot.MaxOperatorLen+1) }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := snap(id, 1)
			c.mutate(&s)
			saved, err := st.Save(context.Background(), s)
			kit.WantCode(t, err, factum.CodeIllegalArgument)
			if saved {
				t.Error("an invalid snapshot was reported saved")
			}
		})
	}
	_, err := st.Load(context.Background(), id)
	kit.WantCode(t, err, factum.CodeNotFound)
	_, err = st.Load(context.Background(), factum.AggregateID{NamedAggregate: f.Named})
	kit.WantCode(t, err, factum.CodeIllegalArgument)
}

func testLoadMissing(t *testing.T, st snapshot.Store) {
	f := newFixture(t)
	_, err := st.Load(context.Background(), f.ID("never-saved"))
	kit.WantCode(t, err, factum.CodeNotFound)
	mustSave(t, st, snap(f.ID("saved"), 1))
	_, err = st.Load(context.Background(), f.ID("still-never-saved"))
	kit.WantCode(t, err, factum.CodeNotFound)
}

func testVersionGuard(t *testing.T, st snapshot.Store) {
	f := newFixture(t)
	id := f.ID("guarded")
	if !mustSave(t, st, snap(id, 5)) {
		t.Fatal("v5 on an empty store was not saved")
	}
	// Lower: refused quietly, nothing changes.
	if mustSave(t, st, snap(id, 4)) {
		t.Error("v4 over v5 reported saved")
	}
	same(t, mustLoad(t, st, id), snap(id, 5))
	// Equal: a repair overwrites.
	repair := snap(id, 5)
	repair.State = json.RawMessage(`{"repaired":true}`)
	repair.Operator = "repairer"
	if !mustSave(t, st, repair) {
		t.Error("an equal version (repair) reported not saved")
	}
	same(t, mustLoad(t, st, id), repair)
	// Higher: replaces, and a version may skip ahead.
	if !mustSave(t, st, snap(id, 9)) {
		t.Error("v9 over v5 reported not saved")
	}
	same(t, mustLoad(t, st, id), snap(id, 9))
	if mustSave(t, st, snap(id, 6)) {
		t.Error("v6 over v9 reported saved")
	}
	same(t, mustLoad(t, st, id), snap(id, 9))
}

func testTenantMismatch(t *testing.T, st snapshot.Store) {
	f := newFixture(t)
	id := f.ID("tenanted").WithTenant("tenant-a")
	mustSave(t, st, snap(id, 1))
	_, err := st.Save(context.Background(), snap(id.WithTenant("tenant-b"), 2))
	kit.WantCode(t, err, factum.CodeTenantMismatch)
	noOwner := func(err error) {
		t.Helper()
		if fe := factum.AsError(err); strings.Contains(err.Error()+fe.Message+fe.Aggregate.Tenant, "tenant-a") {
			t.Fatalf("error to tenant-b names the owner tenant: %v", err)
		}
	}
	noOwner(err)
	_, err = st.Load(context.Background(), id.WithTenant("tenant-b"))
	kit.WantCode(t, err, factum.CodeTenantMismatch)
	noOwner(err)
	_, err = st.Load(context.Background(), id.WithTenant(""))
	kit.WantCode(t, err, factum.CodeTenantMismatch)
	same(t, mustLoad(t, st, id), snap(id, 1))
}

func testStateNotRetained(t *testing.T, st snapshot.Store) {
	f := newFixture(t)
	id := f.ID("buffers")
	s := snap(id, 1)
	buf := []byte(`{"v":"original"}`)
	s.State = buf
	mustSave(t, st, s)
	copy(buf, []byte(`{"v":"CHANGED!"}`))
	got := mustLoad(t, st, id)
	if !kit.JSONEqual(got.State, []byte(`{"v":"original"}`)) {
		t.Fatalf("changing the saved buffer changed the store: %s", got.State)
	}
	copy(got.State, []byte(`{"v":"CHANGED!"}`))
	if again := mustLoad(t, st, id); !kit.JSONEqual(again.State, []byte(`{"v":"original"}`)) {
		t.Fatalf("changing a loaded state changed the store: %s", again.State)
	}
}

func testTypesSeparate(t *testing.T, st snapshot.Store) {
	f := newFixture(t)
	mustSave(t, st, snap(f.ID("same-id"), 7))
	other := f.other().WithID("same-id")
	if !mustSave(t, st, snap(other, 1)) {
		t.Fatal("v1 of another aggregate type with the same ID was not saved")
	}
	if got := mustLoad(t, st, f.ID("same-id")); got.Version != 7 {
		t.Errorf("version = %d, want 7: aggregate types share snapshots", got.Version)
	}
	if got := mustLoad(t, st, other); got.Version != 1 {
		t.Errorf("other type version = %d, want 1", got.Version)
	}
}

func testCancelled(t *testing.T, st snapshot.Store) {
	f := newFixture(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := st.Save(ctx, snap(f.ID("cancelled"), 1)); !errors.Is(err, context.Canceled) {
		t.Errorf("Save with a cancelled context: %v, want context.Canceled", err)
	}
	if _, err := st.Load(ctx, f.ID("cancelled")); !errors.Is(err, context.Canceled) {
		t.Errorf("Load with a cancelled context: %v, want context.Canceled", err)
	}
	_, err := st.Load(context.Background(), f.ID("cancelled"))
	kit.WantCode(t, err, factum.CodeNotFound)
}

// testConcurrentSaves saves versions 1..n of a few aggregates from many
// goroutines in random order: whatever the interleaving, each aggregate
// ends at version n with version n's state.
func testConcurrentSaves(t *testing.T, st snapshot.Store) {
	f := newFixture(t)
	const n, workers = 200, 16
	ids := []factum.AggregateID{f.ID("hot-1"), f.ID("hot-2"), f.ID("hot-3")}
	for _, id := range ids {
		versions := rand.Perm(n)
		var wg sync.WaitGroup
		errs := make(chan error, n)
		next := make(chan int)
		for range workers {
			wg.Go(func() {
				for v := range next {
					if _, err := st.Save(context.Background(), snap(id, v+1)); err != nil {
						errs <- fmt.Errorf("save v%d: %w", v+1, err)
					}
				}
			})
		}
		for _, v := range versions {
			next <- v
		}
		close(next)
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatal(err)
		}
		same(t, mustLoad(t, st, id), snap(id, n))
	}
}

// testConcurrentAggregates has goroutines race to save increasing versions
// of shared aggregates while others load them: loads only ever see
// versions that never go back.
func testConcurrentAggregates(t *testing.T, st snapshot.Store) {
	f := newFixture(t)
	const aggregates, versions = 8, 60
	var wg sync.WaitGroup
	errs := make(chan error, aggregates*4)
	for a := range aggregates {
		id := f.ID(fmt.Sprintf("agg-%d", a))
		for w := range 2 {
			wg.Go(func() {
				for v := 1 + w; v <= versions; v += 2 {
					if _, err := st.Save(context.Background(), snap(id, v)); err != nil {
						errs <- err
						return
					}
				}
			})
		}
		wg.Go(func() {
			last := 0
			for range versions {
				got, err := st.Load(context.Background(), id)
				if errors.Is(err, factum.ErrNotFound) {
					continue
				}
				if err != nil {
					errs <- err
					return
				}
				if got.Version < last {
					errs <- fmt.Errorf("%s went back from v%d to v%d", id, last, got.Version)
					return
				}
				if !kit.JSONEqual(got.State, snap(id, got.Version).State) {
					errs <- fmt.Errorf("%s v%d has the state %s of another version", id, got.Version, got.State)
					return
				}
				last = got.Version
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	for a := range aggregates {
		if got := mustLoad(t, st, f.ID(fmt.Sprintf("agg-%d", a))); got.Version != versions {
			t.Errorf("agg-%d ended at v%d, want v%d", a, got.Version, versions)
		}
	}
}
