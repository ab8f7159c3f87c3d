package eventstoretest

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/eventstore"
	"github.com/factum-go/factum/internal/kit"
)

// NewStore returns a store for one case of the kit. It may return the same
// store to several cases; each case uses identities of its own. Register
// clean-up with t.Cleanup.
type NewStore func(t *testing.T) eventstore.Store

// Run runs the whole contract kit against the stores newStore returns.
// Its cases run in parallel (t.Parallel), so they also race each other on
// one backend, and newStore is called from several goroutines.
func Run(t *testing.T, newStore NewStore) {
	t.Helper()
	cases := []kit.Case[eventstore.Store]{
		{Name: "RoundTrip", Run: testRoundTrip},
		{Name: "InvalidStreamRefused", Run: testInvalidStream},
		{Name: "Conflicts", Run: testConflicts},
		{Name: "ConflictPrecedence", Run: testPrecedence},
		{Name: "RequestIDAcrossAggregates", Run: testRequestAcrossAggregates},
		{Name: "RequestExistsAndLookup", Run: testLookup},
		{Name: "TenantSealed", Run: testTenantSealed},
		{Name: "LoadRanges", Run: testLoadRanges},
		{Name: "LoadByTime", Run: testLoadByTime},
		{Name: "ScanAggregateIDs", Run: testScan},
		{Name: "GlobalLog", Run: testGlobalLog},
		{Name: "WaitLog", Run: testWaitLog},
		{Name: "WaitLogAfterAnEarlierAppend", Run: testWaitLogAfterAppend},
		{Name: "CancelledContext", Run: testCancelled},
		{Name: "FastPathsMatchFallbacks", Run: testFastPaths},
		{Name: "ConcurrentSameVersion", Run: testConcurrentSameVersion},
		{Name: "ConcurrentSameRequest", Run: testConcurrentSameRequest},
		{Name: "ConcurrentCreateSameRequest", Run: testConcurrentCreate},
		{Name: "ParallelAggregatesInLog", Run: testParallelAggregates},
		{Name: "ConcurrentMixedOutcomes", Run: func(t *testing.T, st eventstore.Store) { AppendMixedOutcomes(t, st, nil) }},
		{Name: "GroupAppends", Run: testGroupAppends},
		{Name: "GroupRefusals", Run: testGroupRefusals},
		{Name: "GroupMalformed", Run: testGroupMalformed},
		{Name: "GroupCancelled", Run: testGroupCancelled},
		{Name: "ConcurrentGroups", Run: testGroupRace},
	}
	kit.RunParallel(t, newStore, cases)
}

// fixture makes identities unique to one case.
type fixture = kit.Fixture

func newFixture(t *testing.T) fixture { return kit.NewFixture(t, "acct_") }

// base is a fixed, millisecond-precise time every backend stores exactly.
var base = time.Date(2026, 1, 2, 3, 4, 5, 6_000_000, time.UTC)

// stream builds a valid stream with n events.
func stream(id factum.AggregateID, version int, requestID string, n int) *factum.EventStream {
	s := &factum.EventStream{
		ID:          factum.NewID(),
		AggregateID: id,
		Version:     version,
		CommandID:   factum.NewID(),
		RequestID:   requestID,
		CreateTime:  base.Add(time.Duration(version) * time.Second),
	}
	for i := 1; i <= n; i++ {
		s.Events = append(s.Events, factum.DomainEvent{
			ID:       factum.NewID(),
			Name:     "thing_happened",
			Sequence: i,
			IsLast:   i == n,
			Body:     json.RawMessage(fmt.Sprintf(`{"n":%d,"version":%d}`, i, version)),
		})
	}
	return s
}

func mustAppend(t *testing.T, st eventstore.Store, s *factum.EventStream) {
	t.Helper()
	if err := st.Append(context.Background(), s); err != nil {
		t.Fatalf("append %s v%d (request %s): %v", s.AggregateID, s.Version, s.RequestID, err)
	}
}

func load(t *testing.T, st eventstore.Store, id factum.AggregateID) []factum.EventStream {
	t.Helper()
	got, err := st.Load(context.Background(), id, 1, eventstore.MaxVersion)
	if err != nil {
		t.Fatalf("load %s: %v", id, err)
	}
	return got
}

// sameStream fails unless got holds every field of want.
func sameStream(t *testing.T, got factum.EventStream, want *factum.EventStream) {
	t.Helper()
	wantTenant := want.AggregateID.TenantOrDefault()
	switch {
	case got.ID != want.ID:
		t.Fatalf("stream ID = %q, want %q", got.ID, want.ID)
	case got.AggregateID.NamedAggregate != want.AggregateID.NamedAggregate || got.AggregateID.ID != want.AggregateID.ID:
		t.Fatalf("aggregate = %v, want %v", got.AggregateID, want.AggregateID)
	case got.AggregateID.Tenant != wantTenant:
		t.Fatalf("tenant = %q, want %q", got.AggregateID.Tenant, wantTenant)
	case got.Version != want.Version:
		t.Fatalf("version = %d, want %d", got.Version, want.Version)
	case got.CommandID != want.CommandID || got.RequestID != want.RequestID:
		t.Fatalf("command/request = %q/%q, want %q/%q", got.CommandID, got.RequestID, want.CommandID, want.RequestID)
	case got.OwnerID != want.OwnerID:
		t.Fatalf("owner = %q, want %q", got.OwnerID, want.OwnerID)
	case !got.CreateTime.Equal(want.CreateTime):
		t.Fatalf("create time = %v, want %v", got.CreateTime, want.CreateTime)
	case len(got.Header) != len(want.Header) || (len(want.Header) > 0 && !reflect.DeepEqual(got.Header, want.Header)):
		t.Fatalf("header = %v, want %v", got.Header, want.Header)
	case len(got.Events) != len(want.Events):
		t.Fatalf("%d events, want %d", len(got.Events), len(want.Events))
	case want.Position != factum.Position{} && got.Position != want.Position:
		t.Fatalf("position = %v, want %v", got.Position, want.Position)
	}
	for i, e := range want.Events {
		g := got.Events[i]
		if g.ID != e.ID || g.Name != e.Name || g.Revision != e.Revision || g.Sequence != e.Sequence || g.IsLast != e.IsLast {
			t.Fatalf("event %d = %+v, want %+v", i, g, e)
		}
		if !kit.JSONEqual(g.Body, e.Body) {
			t.Fatalf("event %d body = %s, want %s", i, g.Body, e.Body)
		}
	}
}

// wantRefused fails unless err refuses bad with code: a *factum.Error
// naming bad's aggregate, version, command and request, retryable as code
// is. It returns the error.
func wantRefused(t *testing.T, err error, code factum.Code, bad *factum.EventStream) *factum.Error {
	t.Helper()
	fe := kit.WantCode(t, err, code)
	if fe.Aggregate.ID != bad.AggregateID.ID || fe.Aggregate.Aggregate != bad.AggregateID.Aggregate || fe.Version != bad.Version ||
		fe.RequestID != bad.RequestID || fe.CommandID != bad.CommandID {
		t.Fatalf("error identities = %v v%d command %q request %q, want the refused stream's: %v v%d command %q request %q",
			fe.Aggregate, fe.Version, fe.CommandID, fe.RequestID, bad.AggregateID, bad.Version, bad.CommandID, bad.RequestID)
	}
	if fe.Retryable != code.Retryable() {
		t.Fatalf("retryable = %v, want %v", fe.Retryable, code.Retryable())
	}
	return fe
}

// wroteNothing fails unless a refused write left id holding exactly want,
// the streams it held before, and the log holding nothing after tail.
func wroteNothing(t *testing.T, st eventstore.Store, id factum.AggregateID, tail factum.Position, want ...*factum.EventStream) {
	t.Helper()
	got := load(t, st, id)
	if len(got) != len(want) {
		t.Fatalf("after the refused write: %d streams, want the original %d", len(got), len(want))
	}
	for i, w := range want {
		sameStream(t, got[i], w)
	}
	if after := readLogFrom(t, st, tail, 100); len(after) != 0 {
		t.Fatalf("the refused write wrote %d streams to the log", len(after))
	}
}

// appendTwo appends versions 1 (events1 events, request req-1) and 2 (one
// event, request req-2) of id, as a refusal case holds before its refused
// write, and returns them with the log's tail past them.
func appendTwo(t *testing.T, st eventstore.Store, id factum.AggregateID, events1 int) (s1, s2 *factum.EventStream, tail factum.Position) {
	t.Helper()
	s1, s2 = stream(id, 1, "req-1", events1), stream(id, 2, "req-2", 1)
	mustAppend(t, st, s1)
	mustAppend(t, st, s2)
	return s1, s2, logTailPast(t, st, s2.ID)
}

// logTail returns the position of the last stream in the log.
func logTail(t *testing.T, st eventstore.Store) factum.Position {
	t.Helper()
	var pos factum.Position
	for {
		page, err := st.ReadLog(context.Background(), pos, 1000)
		if err != nil {
			t.Fatalf("read log: %v", err)
		}
		if len(page) == 0 {
			return pos
		}
		pos = page[len(page)-1].Position
	}
}

// logTailPast returns the log's tail once it holds the stream with ID
// streamID. A backend's log may show a committed stream a little later
// (PostgreSQL's log reads stop below transactions still in flight, anyone's
// on the server, and the kit's cases run in parallel), so a case that
// checks what follows its own appends starts from after them.
func logTailPast(t *testing.T, st eventstore.Store, streamID string) factum.Position {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		var pos factum.Position
		seen := false
		for {
			page, err := st.ReadLog(context.Background(), pos, 1000)
			if err != nil {
				t.Fatalf("read log: %v", err)
			}
			if len(page) == 0 {
				break
			}
			for _, s := range page {
				seen = seen || s.ID == streamID
			}
			pos = page[len(page)-1].Position
		}
		if seen {
			return pos
		}
		if time.Now().After(deadline) {
			t.Fatalf("stream %s is not in the log 30 s after its append", streamID)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// readLogFrom returns every stream after pos, reading in pages of size page.
func readLogFrom(t *testing.T, st eventstore.Store, pos factum.Position, page int) []factum.EventStream {
	t.Helper()
	var out []factum.EventStream
	for {
		got, err := st.ReadLog(context.Background(), pos, page)
		if err != nil {
			t.Fatalf("read log: %v", err)
		}
		if len(got) > page {
			t.Fatalf("read log returned %d streams, limit %d", len(got), page)
		}
		if len(got) == 0 {
			return out
		}
		for _, s := range got {
			if !pos.Less(s.Position) {
				t.Fatalf("log position %v does not follow %v", s.Position, pos)
			}
			pos = s.Position
		}
		out = append(out, got...)
	}
}
