package eventstoretest

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/eventstore"
	"github.com/factum-go/factum/internal/kit"
)

func testRoundTrip(t *testing.T, st eventstore.Store) {
	f := newFixture(t)
	id := f.ID("round-trip").WithTenant("tenant-a")
	s1 := stream(id, 1, "req-1", 3)
	s1.OwnerID = "user-7"
	s1.Header = map[string]string{"trace": "abc", "source": "kit"}
	s1.Events[1].Revision = 2
	s1.Events[2].Name = "other_thing_happened"
	s1.Events[2].Body = []byte(`{"nested":{"list":[1,2,3],"text":"héllo \"quoted\""},"b":true,"z":null}`)
	mustAppend(t, st, s1)
	if s1.Position.IsZero() {
		t.Fatal("append did not set the stream's log position")
	}
	s2 := stream(id, 2, "req-2", 1)
	mustAppend(t, st, s2)
	if !s1.Position.Less(s2.Position) {
		t.Fatalf("positions %v then %v do not increase", s1.Position, s2.Position)
	}
	got := load(t, st, id)
	if len(got) != 2 {
		t.Fatalf("loaded %d streams, want 2", len(got))
	}
	sameStream(t, got[0], s1)
	sameStream(t, got[1], s2)

	// The default tenant is stored explicitly.
	d := f.ID("default-tenant")
	d.Tenant = ""
	s3 := stream(d, 1, "req-1", 1)
	mustAppend(t, st, s3)
	got = load(t, st, d.WithTenant(factum.DefaultTenant))
	if len(got) != 1 || got[0].AggregateID.Tenant != factum.DefaultTenant {
		t.Fatalf("default tenant stream = %+v", got)
	}
}

func testInvalidStream(t *testing.T, st eventstore.Store) {
	f := newFixture(t)
	id := f.ID("invalid")
	cases := []struct {
		name   string
		mutate func(*factum.EventStream)
	}{
		{"no events", func(s *factum.EventStream) { s.Events = nil }},
		{"version zero", func(s *factum.EventStream) { s.Version = 0 }},
		{"empty request id", func(s *factum.EventStream) { s.RequestID = "" }},
		{"empty aggregate id", func(s *factum.EventStream) { s.AggregateID.ID = "" }},
		{"bad context name", func(s *factum.EventStream) { s.AggregateID.Context = "has space" }},
		{"oversized id", func(s *factum.EventStream) { s.AggregateID.ID = string(make([]byte, factum.MaxIDLen+1)) }},
		{"bad sequence", func(s *factum.EventStream) { s.Events[0].Sequence = 2 }},
		{"invalid body", func(s *factum.EventStream) { s.Events[0].Body = []byte("{nope") }},
		{"body not UTF-8", func(s *factum.EventStream) { s.Events[0].Body = []byte("\"\xff\"") }},
		{"empty event name", func(s *factum.EventStream) { s.Events[0].Name = "" }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := stream(id, 1, "req-1", 1)
			c.mutate(s)
			kit.WantCode(t, st.Append(context.Background(), s), factum.CodeIllegalArgument)
		})
	}
	if got := load(t, st, id); len(got) != 0 {
		t.Fatalf("invalid streams stored: %+v", got)
	}
}

func testConflicts(t *testing.T, st eventstore.Store) {
	f := newFixture(t)
	type step struct {
		name string
		make func(id factum.AggregateID) *factum.EventStream
		code factum.Code
	}
	steps := []step{
		{"retried create is a duplicate request", func(id factum.AggregateID) *factum.EventStream { return stream(id, 1, "req-1", 1) }, factum.CodeDuplicateRequestID},
		{"another create is a duplicate aggregate", func(id factum.AggregateID) *factum.EventStream { return stream(id, 1, "req-other", 1) }, factum.CodeDuplicateAggregateID},
		{"same version again", func(id factum.AggregateID) *factum.EventStream { return stream(id, 2, "req-other", 1) }, factum.CodeEventVersionConflict},
		{"gap refused", func(id factum.AggregateID) *factum.EventStream { return stream(id, 4, "req-other", 1) }, factum.CodeEventVersionConflict},
		{"older request at next version", func(id factum.AggregateID) *factum.EventStream { return stream(id, 3, "req-1", 1) }, factum.CodeDuplicateRequestID},
		{"other tenant", func(id factum.AggregateID) *factum.EventStream {
			return stream(id.WithTenant("intruder"), 3, "req-3", 1)
		}, factum.CodeTenantMismatch},
	}
	for _, s := range steps {
		t.Run(s.name, func(t *testing.T) {
			id := f.ID("conflict-" + factum.DeriveID(s.name)[:8]).WithTenant("tenant-a")
			s1, s2, tail := appendTwo(t, st, id, 2)
			bad := s.make(id)
			wantRefused(t, st.Append(context.Background(), bad), s.code, bad)
			wroteNothing(t, st, id, tail, s1, s2)
		})
	}
	t.Run("first version must be 1", func(t *testing.T) {
		id := f.ID("never-created")
		kit.WantCode(t, st.Append(context.Background(), stream(id, 2, "req-1", 1)), factum.CodeEventVersionConflict)
		if got := load(t, st, id); len(got) != 0 {
			t.Fatalf("stored %d streams", len(got))
		}
	})
}

func testPrecedence(t *testing.T, st eventstore.Store) {
	f := newFixture(t)
	id := f.ID("precedence").WithTenant("tenant-a")
	mustAppend(t, st, stream(id, 1, "req-1", 1))
	mustAppend(t, st, stream(id, 2, "req-2", 1))
	// Duplicate request and version conflict both apply: duplicate wins.
	kit.WantCode(t, st.Append(context.Background(), stream(id, 2, "req-2", 1)), factum.CodeDuplicateRequestID)
	// Duplicate request and duplicate aggregate both apply: duplicate wins.
	kit.WantCode(t, st.Append(context.Background(), stream(id, 1, "req-2", 1)), factum.CodeDuplicateRequestID)
	// Duplicate aggregate and version conflict both apply: aggregate wins.
	kit.WantCode(t, st.Append(context.Background(), stream(id, 1, "req-9", 1)), factum.CodeDuplicateAggregateID)
	// Another tenant learns nothing else about the aggregate.
	kit.WantCode(t, st.Append(context.Background(), stream(id.WithTenant("tenant-b"), 1, "req-1", 1)), factum.CodeTenantMismatch)
}

func testRequestAcrossAggregates(t *testing.T, st eventstore.Store) {
	f := newFixture(t)
	a, b := f.ID("a"), f.ID("b")
	mustAppend(t, st, stream(a, 1, "shared-request", 1))
	mustAppend(t, st, stream(b, 1, "shared-request", 1))
	other := factum.NamedAggregate{Context: "kit", Aggregate: f.Named.Aggregate + "_x"}.WithID("a")
	mustAppend(t, st, stream(other, 1, "shared-request", 1))
	for _, id := range []factum.AggregateID{a, b, other} {
		if got := load(t, st, id); len(got) != 1 {
			t.Fatalf("%s: %d streams, want 1", id, len(got))
		}
	}
}

func testLookup(t *testing.T, st eventstore.Store) {
	f := newFixture(t)
	ctx := context.Background()
	id := f.ID("lookup")
	s1, s2 := stream(id, 1, "req-1", 1), stream(id, 2, "req-2", 2)
	mustAppend(t, st, s1)
	mustAppend(t, st, s2)
	cases := []struct {
		id      factum.AggregateID
		request string
		want    *factum.EventStream
	}{
		{id, "req-1", s1},
		{id, "req-2", s2},
		{id, "req-3", nil},
		{f.ID("missing"), "req-1", nil},
	}
	for _, c := range cases {
		ok, err := st.RequestExists(ctx, c.id, c.request)
		if err != nil {
			t.Fatalf("request exists %s %s: %v", c.id, c.request, err)
		}
		if ok != (c.want != nil) {
			t.Fatalf("request exists %s %s = %v, want %v", c.id, c.request, ok, c.want != nil)
		}
		got, err := st.Lookup(ctx, c.id, c.request)
		if c.want == nil {
			fe := kit.WantCode(t, err, factum.CodeNotFound)
			if fe.RequestID != c.request || fe.Aggregate.ID != c.id.ID {
				t.Fatalf("not-found error names %v / %q", fe.Aggregate, fe.RequestID)
			}
			continue
		}
		if err != nil {
			t.Fatalf("lookup %s: %v", c.request, err)
		}
		sameStream(t, got, c.want)
	}
}

func testLoadRanges(t *testing.T, st eventstore.Store) {
	f := newFixture(t)
	ctx := context.Background()
	id := f.ID("ranges")
	for v := 1; v <= 5; v++ {
		mustAppend(t, st, stream(id, v, fmt.Sprintf("req-%d", v), 1))
	}
	cases := []struct {
		from, to int
		want     []int
	}{
		{1, eventstore.MaxVersion, []int{1, 2, 3, 4, 5}},
		{2, 3, []int{2, 3}},
		{4, 4, []int{4}},
		{5, 100, []int{5}},
		{6, eventstore.MaxVersion, nil},
	}
	for _, c := range cases {
		got, err := st.Load(ctx, id, c.from, c.to)
		if err != nil {
			t.Fatalf("load [%d,%d]: %v", c.from, c.to, err)
		}
		if len(got) != len(c.want) {
			t.Fatalf("load [%d,%d]: %d streams, want %v", c.from, c.to, len(got), c.want)
		}
		for i, v := range c.want {
			if got[i].Version != v {
				t.Fatalf("load [%d,%d][%d] = v%d, want v%d", c.from, c.to, i, got[i].Version, v)
			}
		}
	}
	got, err := st.Load(ctx, f.ID("missing"), 1, eventstore.MaxVersion)
	if err != nil || len(got) != 0 {
		t.Fatalf("load of a missing aggregate = %v, %v; want empty, nil", got, err)
	}
	for _, r := range [][2]int{{0, 1}, {3, 2}, {-1, 5}} {
		_, err := st.Load(ctx, id, r[0], r[1])
		kit.WantCode(t, err, factum.CodeIllegalArgument)
	}
}

func testLoadByTime(t *testing.T, st eventstore.Store) {
	f := newFixture(t)
	ctx := context.Background()
	id := f.ID("by-time")
	for v := 1; v <= 4; v++ {
		mustAppend(t, st, stream(id, v, fmt.Sprintf("req-%d", v), 1)) // created at base + v seconds
	}
	cases := []struct {
		start, end time.Time
		want       []int
	}{
		{base, base.Add(time.Hour), []int{1, 2, 3, 4}},
		{base.Add(2 * time.Second), base.Add(4 * time.Second), []int{2, 3}},
		{base.Add(2 * time.Second), base.Add(2 * time.Second), nil},
		{base.Add(time.Hour), base.Add(2 * time.Hour), nil},
	}
	for _, c := range cases {
		got, err := st.LoadByTime(ctx, id, c.start, c.end)
		if err != nil {
			t.Fatalf("load by time: %v", err)
		}
		if len(got) != len(c.want) {
			t.Fatalf("load [%v,%v): %d streams, want %v", c.start, c.end, len(got), c.want)
		}
		for i, v := range c.want {
			if got[i].Version != v {
				t.Fatalf("load by time [%d] = v%d, want v%d", i, got[i].Version, v)
			}
		}
	}
	_, err := st.LoadByTime(ctx, id, base.Add(time.Second), base)
	kit.WantCode(t, err, factum.CodeIllegalArgument)
}

func testScan(t *testing.T, st eventstore.Store) {
	f := newFixture(t)
	ctx := context.Background()
	tenants := map[string]string{"c": "t1", "a": "t2", "e": "t1", "b": "t3", "d": "t2"}
	for _, id := range []string{"c", "a", "e", "b", "d"} {
		mustAppend(t, st, stream(f.ID(id).WithTenant(tenants[id]), 1, "req", 1))
	}
	other := factum.NamedAggregate{Context: "kit", Aggregate: f.Named.Aggregate + "_other"}
	mustAppend(t, st, stream(other.WithID("aa"), 1, "req", 1))

	cases := []struct {
		after string
		limit int
		want  []string
	}{
		{"", 100, []string{"a", "b", "c", "d", "e"}},
		{"", 2, []string{"a", "b"}},
		{"b", 2, []string{"c", "d"}},
		{"bb", 10, []string{"c", "d", "e"}},
		{"e", 10, nil},
	}
	for _, c := range cases {
		got, err := st.ScanAggregateIDs(ctx, f.Named, c.after, c.limit)
		if err != nil {
			t.Fatalf("scan after %q: %v", c.after, err)
		}
		if len(got) != len(c.want) {
			t.Fatalf("scan after %q limit %d = %v, want %v", c.after, c.limit, got, c.want)
		}
		for i, w := range c.want {
			if got[i].ID != w || got[i].NamedAggregate != f.Named || got[i].Tenant != tenants[w] {
				t.Fatalf("scan after %q [%d] = %v, want %s@%s", c.after, i, got[i], w, tenants[w])
			}
		}
	}
	_, err := st.ScanAggregateIDs(ctx, f.Named, "", 0)
	kit.WantCode(t, err, factum.CodeIllegalArgument)
}

func testGlobalLog(t *testing.T, st eventstore.Store) {
	f := newFixture(t)
	ctx := context.Background()
	tail := logTail(t, st)
	var appended []*factum.EventStream
	for i := range 7 {
		id := f.ID(fmt.Sprintf("log-%d", i%3))
		v := i/3 + 1
		s := stream(id, v, fmt.Sprintf("req-%d", v), 1+i%2)
		mustAppend(t, st, s)
		appended = append(appended, s)
	}
	for _, page := range []int{1, 3, 100} {
		got := readLogFrom(t, st, tail, page)
		if len(got) != len(appended) {
			t.Fatalf("page %d: log holds %d new streams, want %d", page, len(got), len(appended))
		}
		for i, s := range appended {
			sameStream(t, got[i], s)
		}
	}
	if got, err := st.ReadLog(ctx, appended[len(appended)-1].Position, 10); err != nil || len(got) != 0 {
		t.Fatalf("read after the last stream = %d streams, %v", len(got), err)
	}
	_, err := st.ReadLog(ctx, tail, 0)
	kit.WantCode(t, err, factum.CodeIllegalArgument)
}

func testWaitLog(t *testing.T, st eventstore.Store) {
	f := newFixture(t)
	tail := logTail(t, st)

	// A waiter whose context ends returns the context's error.
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	err := st.WaitLog(ctx, tail)
	cancel()
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("wait on an idle log = %v, want deadline exceeded", err)
	}

	// A waiter wakes for a new append.
	ctx, cancel = context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	woke := make(chan error, 1)
	go func() { woke <- st.WaitLog(ctx, tail) }()
	time.Sleep(20 * time.Millisecond)
	s := stream(f.ID("wake"), 1, "req-1", 1)
	mustAppend(t, st, s)
	if err := <-woke; err != nil {
		t.Fatalf("waiter returned %v, want nil after an append", err)
	}
	got := readLogFrom(t, st, tail, 10)
	if len(got) != 1 || got[0].ID != s.ID {
		t.Fatalf("after waking the log holds %d new streams", len(got))
	}

	// A waiter behind the tail returns at once.
	if err := st.WaitLog(ctx, tail); err != nil {
		t.Fatalf("wait behind the tail: %v", err)
	}
}

// A wait returns for a stream appended before it began, whose wake-up it
// never took: a reader that read the log to its end and handled what it
// read waits from there, and must find what came meanwhile without
// reading first. On a store that wakes its waiters only for appends (the
// memory store) a wait that does not look at the log first never returns.
func testWaitLogAfterAppend(t *testing.T, st eventstore.Store) {
	f := newFixture(t)
	tail := logTail(t, st)
	mustAppend(t, st, stream(f.ID("before-wait"), 1, "req-1", 1))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := st.WaitLog(ctx, tail); err != nil {
		t.Fatalf("wait after a stream appended before it = %v, want nil", err)
	}
}

func testCancelled(t *testing.T, st eventstore.Store) {
	f := newFixture(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	id := f.ID("cancelled")
	if err := st.Append(ctx, stream(id, 1, "req-1", 1)); err == nil {
		t.Fatal("append with a cancelled context succeeded")
	}
	if got := load(t, st, id); len(got) != 0 {
		t.Fatalf("append with a cancelled context stored %d streams", len(got))
	}
	if _, err := st.Load(ctx, id, 1, 1); err == nil {
		t.Fatal("load with a cancelled context succeeded")
	}
	if _, err := st.ReadLog(ctx, factum.Position{}, 1); err == nil {
		t.Fatal("read log with a cancelled context succeeded")
	}
}

// race runs n goroutines that each append build(i) and returns the errors.
func race(st eventstore.Store, n int, build func(i int) *factum.EventStream) []error {
	errs := make([]error, n)
	streams := make([]*factum.EventStream, n)
	for i := range n {
		streams[i] = build(i)
	}
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			<-start
			errs[i] = st.Append(context.Background(), streams[i])
		})
	}
	close(start)
	wg.Wait()
	return errs
}

func countCodes(errs []error) map[factum.Code]int {
	m := map[factum.Code]int{}
	for _, err := range errs {
		m[factum.CodeOf(err)]++
	}
	return m
}

func testConcurrentSameVersion(t *testing.T, st eventstore.Store) {
	f := newFixture(t)
	id := f.ID("same-version")
	mustAppend(t, st, stream(id, 1, "req-0", 1))
	errs := race(st, 64, func(i int) *factum.EventStream { return stream(id, 2, fmt.Sprintf("req-%d", i+1), 1) })
	got := countCodes(errs)
	if got[factum.CodeOk] != 1 || got[factum.CodeEventVersionConflict] != 63 {
		t.Fatalf("64 appends of version 2: %v, want 1 Ok and 63 EventVersionConflict", got)
	}
	if streams := load(t, st, id); len(streams) != 2 {
		t.Fatalf("aggregate has %d streams, want 2", len(streams))
	}
}

func testConcurrentSameRequest(t *testing.T, st eventstore.Store) {
	f := newFixture(t)
	id := f.ID("same-request")
	mustAppend(t, st, stream(id, 1, "req-0", 1))
	errs := race(st, 64, func(i int) *factum.EventStream { return stream(id, 2+i%4, "dup", 1) })
	got := countCodes(errs)
	if got[factum.CodeOk] != 1 {
		t.Fatalf("64 appends with one request ID: %v, want exactly 1 Ok", got)
	}
	if got[factum.CodeDuplicateRequestID]+got[factum.CodeEventVersionConflict] != 63 {
		t.Fatalf("64 appends with one request ID: %v, want the rest duplicate or conflict", got)
	}
	streams := load(t, st, id)
	n := 0
	for _, s := range streams {
		if s.RequestID == "dup" {
			n++
		}
	}
	if n != 1 || len(streams) != 2 {
		t.Fatalf("%d streams carry the request (want 1), %d in all (want 2)", n, len(streams))
	}
}

func testConcurrentCreate(t *testing.T, st eventstore.Store) {
	f := newFixture(t)
	id := f.ID("same-create")
	errs := race(st, 64, func(int) *factum.EventStream { return stream(id, 1, "create-1", 1) })
	got := countCodes(errs)
	if got[factum.CodeOk] != 1 || got[factum.CodeDuplicateRequestID] != 63 {
		t.Fatalf("64 retried creates: %v, want 1 Ok and 63 DuplicateRequestId", got)
	}
	id2 := f.ID("competing-create")
	errs = race(st, 64, func(i int) *factum.EventStream { return stream(id2, 1, fmt.Sprintf("create-%d", i), 1) })
	got = countCodes(errs)
	if got[factum.CodeOk] != 1 || got[factum.CodeDuplicateAggregateID] != 63 {
		t.Fatalf("64 competing creates: %v, want 1 Ok and 63 DuplicateAggregateId", got)
	}
}

func testParallelAggregates(t *testing.T, st eventstore.Store) {
	f := newFixture(t)
	tail := logTail(t, st)
	const aggregates, workers, versions = 1000, 16, 2
	var wg sync.WaitGroup
	ids := make(chan int)
	errc := make(chan error, workers)
	for range workers {
		wg.Go(func() {
			failed := false
			for i := range ids {
				// After a failure keep taking IDs, so the feeder never
				// blocks: the test fails instead of hanging.
				if failed {
					continue
				}
				id := f.ID(fmt.Sprintf("p-%04d", i))
				for v := 1; v <= versions; v++ {
					if err := st.Append(context.Background(), stream(id, v, fmt.Sprintf("r%d", v), 1)); err != nil {
						errc <- err
						failed = true
						break
					}
				}
			}
		})
	}
	for i := range aggregates {
		ids <- i
	}
	close(ids)
	wg.Wait()
	close(errc)
	for err := range errc {
		t.Fatalf("parallel append: %v", err)
	}
	got := readLogFrom(t, st, tail, 500)
	seen := make(map[string]int, len(got))
	lastVersion := map[string]int{}
	for _, s := range got {
		if s.AggregateID.Aggregate != f.Named.Aggregate {
			continue
		}
		seen[s.ID]++
		if s.Version != lastVersion[s.AggregateID.ID]+1 {
			t.Fatalf("log holds %s v%d after v%d", s.AggregateID.ID, s.Version, lastVersion[s.AggregateID.ID])
		}
		lastVersion[s.AggregateID.ID] = s.Version
	}
	if len(seen) != aggregates*versions {
		t.Fatalf("log holds %d distinct streams, want %d", len(seen), aggregates*versions)
	}
	for id, n := range seen {
		if n != 1 {
			t.Fatalf("stream %s appears %d times in the log", id, n)
		}
	}
}
