package snapshot_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/query"
	"github.com/factum-go/factum/snapshot"
	"github.com/factum-go/factum/snapshot/snapshottest"
)

// naive is a store with one defect chosen by its flags.
type naive struct {
	mu    sync.Mutex
	snaps map[factum.AggregateID]snapshot.Snapshot // keyed without tenant

	noGuard, racyGuard, noTenant, keepNanos, retain, ignoreCtx bool
}

func key(id factum.AggregateID) factum.AggregateID { id.Tenant = ""; return id }

func (n *naive) Save(ctx context.Context, s snapshot.Snapshot) (bool, error) {
	if err := ctx.Err(); err != nil && !n.ignoreCtx {
		return false, err
	}
	if err := s.Validate(); err != nil {
		return false, err
	}
	state := s.State
	if !n.keepNanos {
		s = s.Normalized()
	} else {
		s.AggregateID.Tenant = s.AggregateID.TenantOrDefault()
		s.State = bytes.Clone(s.State)
	}
	if n.retain {
		s.State = state
	}
	n.mu.Lock()
	old, ok := n.snaps[key(s.AggregateID)]
	if n.racyGuard {
		// Check, then write later: the read-then-write the contract forbids.
		n.mu.Unlock()
		time.Sleep(20 * time.Microsecond)
		n.mu.Lock()
	}
	defer n.mu.Unlock()
	if ok && !n.noTenant && old.AggregateID.Tenant != s.AggregateID.Tenant {
		return false, factum.NewError(factum.CodeTenantMismatch, "tenant")
	}
	if ok && !n.noGuard && old.Version > s.Version {
		return false, nil
	}
	n.snaps[key(s.AggregateID)] = s
	return true, nil
}

func (n *naive) Load(ctx context.Context, id factum.AggregateID) (snapshot.Snapshot, error) {
	if err := ctx.Err(); err != nil && !n.ignoreCtx {
		return snapshot.Snapshot{}, err
	}
	if err := id.Validate(); err != nil {
		return snapshot.Snapshot{}, err
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	s, ok := n.snaps[key(id)]
	if !ok {
		return snapshot.Snapshot{}, factum.NotFound("none")
	}
	if !n.noTenant && s.AggregateID.Tenant != id.TenantOrDefault() {
		return snapshot.Snapshot{}, factum.NewError(factum.CodeTenantMismatch, "tenant")
	}
	if !n.retain {
		s.State = bytes.Clone(s.State)
	}
	return s, nil
}

// skewed is a query store whose Find or Count is wrong.
type skewed struct {
	*snapshot.Memory
	ignoreOffset, countAll, reverse bool
}

func (s skewed) Find(ctx context.Context, named factum.NamedAggregate, plan query.Plan) ([]snapshot.Snapshot, error) {
	if s.ignoreOffset {
		plan.Offset = 0
	}
	if s.reverse {
		for i := range plan.Sort {
			if plan.Sort[i].Direction == query.Desc {
				plan.Sort[i].Direction = query.Asc
			} else {
				plan.Sort[i].Direction = query.Desc
			}
		}
	}
	return s.Memory.Find(ctx, named, plan)
}

func (s skewed) Count(ctx context.Context, named factum.NamedAggregate, cond query.Condition) (int64, error) {
	if s.countAll {
		cond = query.All()
	}
	return s.Memory.Count(ctx, named, cond)
}

// brokenStores maps a defect to a store that has it and the kit cases
// that must catch it (any one of them).
var brokenStores = map[string]struct {
	new      func() snapshot.Store
	caughtBy []string
}{
	"lower overwrites higher": {func() snapshot.Store { return newNaive(func(n *naive) { n.noGuard = true }) }, []string{"VersionGuard"}},
	"guard read then write":   {func() snapshot.Store { return newNaive(func(n *naive) { n.racyGuard = true }) }, []string{"ConcurrentSavesKeepHighest", "ConcurrentAggregates", "ConcurrentTenantsOneWins"}},
	"no tenant check":         {func() snapshot.Store { return newNaive(func(n *naive) { n.noTenant = true }) }, []string{"TenantMismatch"}},
	"sub-millisecond times":   {func() snapshot.Store { return newNaive(func(n *naive) { n.keepNanos = true }) }, []string{"RoundTrip"}},
	"retains the state":       {func() snapshot.Store { return newNaive(func(n *naive) { n.retain = true }) }, []string{"StateNotRetained"}},
	"ignores cancellation":    {func() snapshot.Store { return newNaive(func(n *naive) { n.ignoreCtx = true }) }, []string{"CancelledContext"}},
	"find ignores offset":     {func() snapshot.Store { return skewed{Memory: snapshot.NewMemory(), ignoreOffset: true} }, []string{"QueryCorpus"}},
	"count ignores condition": {func() snapshot.Store { return skewed{Memory: snapshot.NewMemory(), countAll: true} }, []string{"QueryCorpus"}},
	"sort reversed":           {func() snapshot.Store { return skewed{Memory: snapshot.NewMemory(), reverse: true} }, []string{"QueryCorpus"}},
	"finder drops the last":   {func() snapshot.Store { return front(lossyFinder{memoryBackend()}) }, []string{"FastPathsMatchFallbacks"}},
	"batch saves the stale":   {func() snapshot.Store { return batchFront(eagerBatch{memoryBackend()}) }, []string{"FastPathsMatchFallbacks"}},
}

func memoryBackend() snapshot.Backend { return snapshot.NewMemory().Backend() }

func front(b snapshot.Backend) snapshot.Store {
	f, err := snapshot.New(b, snapshot.Config{})
	if err != nil {
		panic(err)
	}
	return f
}

func batchFront(b snapshot.Backend) snapshot.Store {
	f, err := snapshot.NewBatch(b, snapshot.Config{})
	if err != nil {
		panic(err)
	}
	return f
}

// lossyFinder is the memory backend whose Find drops the last snapshot of
// a result of two or more.
type lossyFinder struct{ snapshot.Backend }

func (l lossyFinder) Find(ctx context.Context, named factum.NamedAggregate, plan query.Plan) ([]snapshot.Snapshot, error) {
	got, err := l.Backend.(snapshot.Finder).Find(ctx, named, plan)
	if len(got) > 1 {
		got = got[:len(got)-1]
	}
	return got, err
}

func (l lossyFinder) Count(ctx context.Context, named factum.NamedAggregate, cond query.Condition) (int64, error) {
	return l.Backend.(snapshot.Finder).Count(ctx, named, cond)
}

// eagerBatch is the memory backend with a batch save that saves every
// snapshot, whatever version or tenant is stored.
type eagerBatch struct{ snapshot.Backend }

func (e eagerBatch) SaveBatch(ctx context.Context, snaps []snapshot.Snapshot) ([]bool, error) {
	saved := make([]bool, len(snaps))
	for i, s := range snaps {
		if _, err := e.Backend.Save(ctx, s); err != nil {
			return nil, err
		}
		saved[i] = true
	}
	return saved, nil
}

func newNaive(defect func(*naive)) *naive {
	n := &naive{snaps: map[factum.AggregateID]snapshot.Snapshot{}}
	defect(n)
	return n
}

const brokenEnv = "FACTUM_SNAPSHOT_BROKEN_STORE"

// TestBrokenStore runs the kit against one broken store; it runs only in
// the child processes of TestKitCatchesBrokenStores.
func TestBrokenStore(t *testing.T) {
	name := os.Getenv(brokenEnv)
	if name == "" {
		t.Skip("runs only inside TestKitCatchesBrokenStores")
	}
	broken := brokenStores[name]
	snapshottest.Run(t, func(*testing.T) snapshot.Store { return broken.new() })
}

// TestKitCatchesBrokenStores checks that the kit fails every store that
// breaks the contract in one way, each in a child test process.
func TestKitCatchesBrokenStores(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a test process per broken store")
	}
	for name, broken := range brokenStores {
		t.Run(name, func(t *testing.T) {
			cmd := exec.Command(os.Args[0], "-test.run=^TestBrokenStore$", "-test.v")
			cmd.Env = append(os.Environ(), brokenEnv+"="+name)
			out, err := cmd.CombinedOutput()
			if err == nil {
				t.Fatalf("the kit passes a store whose defect is %q", name)
			}
			var failed []string
			for _, line := range strings.Split(string(out), "\n") {
				if l := strings.TrimSpace(line); strings.HasPrefix(l, "--- FAIL: TestBrokenStore/") && strings.Count(l, "/") == 1 {
					failed = append(failed, strings.TrimPrefix(strings.Fields(l)[2], "TestBrokenStore/"))
				}
			}
			for _, c := range broken.caughtBy {
				if slices.Contains(failed, c) {
					t.Logf("caught by %v", failed)
					return
				}
			}
			t.Fatalf("failing cases %v include none of %v:\n%s", failed, broken.caughtBy, out)
		})
	}
}

func TestSnapshotJSON(t *testing.T) {
	s := snapshot.Snapshot{
		AggregateID:    factum.NamedAggregate{Context: "shop", Aggregate: "cart"}.WithID("c1"),
		OwnerID:        "u1",
		Version:        3,
		EventID:        "e3",
		FirstOperator:  "u0",
		Operator:       "u1",
		FirstEventTime: time.UnixMilli(1_000).UTC(),
		EventTime:      time.UnixMilli(2_000).UTC(),
		SnapshotTime:   time.UnixMilli(2_001).UTC(),
		Deleted:        true,
		State:          json.RawMessage(`{"n":10.0,"big":12345678901234567890}`),
	}
	b, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"contextName":"shop","aggregateName":"cart","aggregateId":"c1","tenantId":"default","ownerId":"u1","version":3,` +
		`"eventId":"e3","firstOperator":"u0","operator":"u1","firstEventTime":1000,"eventTime":2000,"snapshotTime":2001,` +
		`"deleted":true,"state":{"n":10.0,"big":12345678901234567890}}`
	if string(b) != want {
		t.Errorf("JSON\n got  %s\n want %s", b, want)
	}
	var back snapshot.Snapshot
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	s.AggregateID.Tenant = factum.DefaultTenant
	if back.AggregateID != s.AggregateID || back.Version != 3 || !back.EventTime.Equal(s.EventTime) || string(back.State) != string(s.State) {
		t.Errorf("round trip = %+v", back)
	}
	doc, err := s.Document()
	if err != nil {
		t.Fatal(err)
	}
	db, _ := json.Marshal(doc)
	wantDoc := `{"aggregateId":"c1","deleted":true,"eventId":"e3","eventTime":2000,"firstEventTime":1000,"firstOperator":"u0",` +
		`"operator":"u1","ownerId":"u1","snapshotTime":2001,"state":{"big":12345678901234567890,"n":10.0},"tenantId":"default","version":3}`
	if string(db) != wantDoc {
		t.Errorf("document\n got  %s\n want %s", db, wantDoc)
	}
	from, err := snapshot.FromDocument(s.AggregateID.NamedAggregate, doc)
	if err != nil {
		t.Fatal(err)
	}
	if from.AggregateID != s.AggregateID || from.Version != 3 || !from.SnapshotTime.Equal(s.SnapshotTime) || !from.Deleted {
		t.Errorf("FromDocument = %+v", from)
	}
	zero, _ := json.Marshal(snapshot.Snapshot{})
	if !strings.Contains(string(zero), `"state":null`) || !strings.Contains(string(zero), `"eventTime":0`) {
		t.Errorf("zero snapshot JSON = %s", zero)
	}
}
