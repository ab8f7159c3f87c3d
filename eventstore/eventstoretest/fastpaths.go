package eventstoretest

import (
	"context"
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/eventstore"
)

// Plain returns b with every optional fast path hidden: the methods of
// eventstore.Backend alone, so that a front end over it takes every
// generic fallback.
func Plain(b eventstore.Backend) eventstore.Backend { return plain{b} }

// plain is Plain's backend.
type plain struct{ b eventstore.Backend }

func (p plain) Append(ctx context.Context, s *factum.EventStream) (eventstore.Outcome, error) {
	return p.b.Append(ctx, s)
}

func (p plain) Load(ctx context.Context, id factum.AggregateID, from, to int) ([]factum.EventStream, error) {
	return p.b.Load(ctx, id, from, to)
}

func (p plain) ReadLog(ctx context.Context, after factum.Position, limit int) ([]factum.EventStream, error) {
	return p.b.ReadLog(ctx, after, limit)
}

// testFastPaths holds each optional fast path of the store's backend (a
// store that is an eventstore.Front, or embeds one) to its generic
// fallback, as testing/fstest holds ReadFileFS to Open: a front end over
// the backend with its fast paths hidden must answer every question alike.
func testFastPaths(t *testing.T, st eventstore.Store) {
	fb, ok := st.(interface{ Backend() eventstore.Backend })
	if !ok {
		t.Skip("the store is not an eventstore front end: no backend to compare")
	}
	b := fb.Backend()
	for _, fp := range []struct {
		name string
		has  bool
	}{
		{"RequestFinder", is[eventstore.RequestFinder](b)},
		{"RequestProber", is[eventstore.RequestProber](b)},
		{"TimeLoader", is[eventstore.TimeLoader](b)},
		{"AggregateScanner", is[eventstore.AggregateScanner](b)},
		{"LogWaiter", is[eventstore.LogWaiter](b)},
	} {
		t.Logf("fast path %s: %v", fp.name, fp.has)
	}
	slow, err := eventstore.New(plain{b}, eventstore.Config{PollInterval: 5 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	f := newFixture(t)
	a, other := f.ID("a-1"), f.ID("b-2").WithTenant("tenant-other")
	var last *factum.EventStream
	for v := 1; v <= 3; v++ {
		last = stream(a, v, "req-"+string(rune('0'+v)), 2)
		mustAppend(t, st, last)
	}
	mustAppend(t, st, stream(other, 1, "req-1", 1))
	mustAppend(t, st, stream(f.ID("c-3"), 1, "req-c", 1))

	same := func(what string, fast, fall any, fastErr, fallErr error) {
		t.Helper()
		if !sameErr(fastErr, fallErr) {
			t.Fatalf("%s: fast path error %v, fallback %v", what, fastErr, fallErr)
		}
		if fastErr == nil && !reflect.DeepEqual(fast, fall) {
			t.Fatalf("%s: fast path %+v, fallback %+v", what, fast, fall)
		}
	}
	for _, q := range []struct {
		id  factum.AggregateID
		req string
	}{
		{a, "req-1"}, {a, "req-3"}, {a, "req-9"}, {a.WithTenant("tenant-other"), "req-1"},
		{other, "req-1"}, {other.WithTenant(""), "req-1"}, {f.ID("missing"), "req-1"},
	} {
		fast, fastErr := st.Lookup(ctx, q.id, q.req)
		fall, fallErr := slow.Lookup(ctx, q.id, q.req)
		same("Lookup "+q.id.String()+" "+q.req, fast, fall, fastErr, fallErr)
		okFast, fastErr := st.RequestExists(ctx, q.id, q.req)
		okFall, fallErr := slow.RequestExists(ctx, q.id, q.req)
		same("RequestExists "+q.id.String()+" "+q.req, okFast, okFall, fastErr, fallErr)
	}
	for _, r := range []struct{ start, end time.Time }{
		{base, base.Add(time.Hour)},
		{base.Add(2 * time.Second), base.Add(3 * time.Second)},
		{base.Add(2 * time.Second), base.Add(2 * time.Second)},
		{base.Add(time.Hour), base.Add(2 * time.Hour)},
		{base.Add(3 * time.Second), base.Add(time.Second)},
	} {
		fast, fastErr := st.LoadByTime(ctx, a, r.start, r.end)
		fall, fallErr := slow.LoadByTime(ctx, a, r.start, r.end)
		same("LoadByTime", fast, fall, fastErr, fallErr)
	}
	for _, s := range []struct {
		after string
		limit int
	}{{"", 1}, {"", 10}, {"a-1", 10}, {"zzz", 10}, {"", 0}} {
		fast, fastErr := st.ScanAggregateIDs(ctx, f.Named, s.after, s.limit)
		fall, fallErr := slow.ScanAggregateIDs(ctx, f.Named, s.after, s.limit)
		same("ScanAggregateIDs", fast, fall, fastErr, fallErr)
	}
	// Both waits return at once for a log that holds a stream after the
	// position.
	logTailPast(t, st, last.ID)
	wctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	fastErr, fallErr := st.WaitLog(wctx, factum.Position{}), slow.WaitLog(wctx, factum.Position{})
	same("WaitLog", nil, nil, fastErr, fallErr)
	if fastErr != nil {
		t.Fatalf("WaitLog on a log holding streams: %v", fastErr)
	}
}

func is[T any](b eventstore.Backend) bool {
	_, ok := b.(T)
	return ok
}

// sameErr reports whether two errors are both nil or both *factum.Error of
// one code.
func sameErr(a, b error) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	var x, y *factum.Error
	return errors.As(a, &x) && errors.As(b, &y) && x.Code == y.Code
}
