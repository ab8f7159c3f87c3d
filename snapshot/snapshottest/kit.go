package snapshottest

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/internal/kit"
	"github.com/factum-go/factum/snapshot"
)

// NewStore returns a store for one case of the kit. It may return the same
// store to several cases; each case uses aggregate types of its own.
// Register clean-up with t.Cleanup.
type NewStore func(t *testing.T) snapshot.Store

// Run runs the whole contract kit against the stores newStore returns. The
// query cases run when the store is also a snapshot.Querier; they include
// the whole query corpus of package querytest, run through a
// snapshot.QueryService. Its cases run in parallel (t.Parallel), so they
// also race each other on one backend, and newStore is called from several
// goroutines.
func Run(t *testing.T, newStore NewStore) {
	t.Helper()
	cases := []kit.Case[snapshot.Store]{
		{Name: "RoundTrip", Run: testRoundTrip},
		{Name: "DefaultTenant", Run: testDefaultTenant},
		{Name: "InvalidRefused", Run: testInvalid},
		{Name: "LoadMissing", Run: testLoadMissing},
		{Name: "VersionGuard", Run: testVersionGuard},
		{Name: "TenantMismatch", Run: testTenantMismatch},
		{Name: "StateNotRetained", Run: testStateNotRetained},
		{Name: "AggregateTypesSeparate", Run: testTypesSeparate},
		{Name: "CancelledContext", Run: testCancelled},
		{Name: "ConcurrentSavesKeepHighest", Run: testConcurrentSaves},
		{Name: "ConcurrentAggregates", Run: testConcurrentAggregates},
		{Name: "ConcurrentTenantsOneWins", Run: testTenantRace},
		{Name: "FastPathsMatchFallbacks", Run: testFastPaths},
	}
	kit.RunParallel(t, newStore, cases)
	queryCases := []kit.Case[snapshot.QueryStore]{
		{Name: "QueryCorpus", Run: testQueryCorpus},
		{Name: "QueryTyped", Run: testQueryTyped},
		{Name: "QueryState", Run: testQueryState},
		{Name: "QueryTenantScope", Run: testQueryTenant},
		{Name: "QueryAggregateTypesSeparate", Run: testQueryTypesSeparate},
		{Name: "QuerySeesLatestSave", Run: testQueryLatest},
		{Name: "QueryWhileSaving", Run: testQueryWhileSaving},
		{Name: "QueryCancelled", Run: testQueryCancelled},
	}
	kit.RunParallel(t, func(t *testing.T) snapshot.QueryStore {
		st := newStore(t)
		qs, ok := st.(snapshot.QueryStore)
		if !ok {
			t.Skipf("%T does not implement snapshot.Querier", st)
		}
		return qs
	}, queryCases)
}

// fixture makes aggregate types unique to one case.
type fixture struct{ kit.Fixture }

func newFixture(t *testing.T) fixture { return fixture{kit.NewFixture(t, "snap_")} }

// other returns a second aggregate type unique to the case.
func (f fixture) other() factum.NamedAggregate {
	return factum.NamedAggregate{Context: f.Named.Context, Aggregate: f.Named.Aggregate + "_other"}
}

// base is a fixed time with sub-millisecond digits every store truncates.
var base = time.Date(2026, 1, 2, 3, 4, 5, 6_789_012, time.UTC)

// snap builds a valid snapshot whose state records its version.
func snap(id factum.AggregateID, version int) snapshot.Snapshot {
	return snapshot.Snapshot{
		AggregateID:    id,
		OwnerID:        "owner-1",
		Version:        version,
		EventID:        fmt.Sprintf("event-%d", version),
		FirstOperator:  "first-op",
		Operator:       fmt.Sprintf("op-%d", version),
		FirstEventTime: base,
		EventTime:      base.Add(time.Duration(version) * time.Second),
		SnapshotTime:   base.Add(time.Duration(version)*time.Second + time.Millisecond),
		State:          json.RawMessage(fmt.Sprintf(`{"version":%d,"items":["a","b"],"nested":{"ok":true}}`, version)),
	}
}

// same fails unless got equals want as a store keeps it.
func same(t *testing.T, got, want snapshot.Snapshot) {
	t.Helper()
	want = want.Normalized()
	switch {
	case got.AggregateID != want.AggregateID:
		t.Fatalf("aggregate = %v, want %v", got.AggregateID, want.AggregateID)
	case got.OwnerID != want.OwnerID:
		t.Fatalf("owner = %q, want %q", got.OwnerID, want.OwnerID)
	case got.Version != want.Version:
		t.Fatalf("version = %d, want %d", got.Version, want.Version)
	case got.EventID != want.EventID:
		t.Fatalf("event ID = %q, want %q", got.EventID, want.EventID)
	case got.FirstOperator != want.FirstOperator || got.Operator != want.Operator:
		t.Fatalf("operators = %q/%q, want %q/%q", got.FirstOperator, got.Operator, want.FirstOperator, want.Operator)
	case !got.FirstEventTime.Equal(want.FirstEventTime):
		t.Fatalf("first event time = %v, want %v", got.FirstEventTime, want.FirstEventTime)
	case !got.EventTime.Equal(want.EventTime):
		t.Fatalf("event time = %v, want %v", got.EventTime, want.EventTime)
	case !got.SnapshotTime.Equal(want.SnapshotTime):
		t.Fatalf("snapshot time = %v, want %v", got.SnapshotTime, want.SnapshotTime)
	case got.Deleted != want.Deleted:
		t.Fatalf("deleted = %v, want %v", got.Deleted, want.Deleted)
	case !kit.JSONEqual(got.State, want.State):
		t.Fatalf("state = %s, want %s", got.State, want.State)
	}
}
