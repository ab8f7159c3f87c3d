package eventstoretest

import (
	"context"
	"fmt"
	"testing"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/eventstore"
	"github.com/factum-go/factum/internal/built"
	"github.com/factum-go/factum/internal/kit"
)

// groups returns the store's group append, skipping the case for a store
// whose backend appends no groups, or that does not append built streams
// by its own methods (a wrapper embedding a front end).
func groups(t *testing.T, st eventstore.Store) built.GroupAppender {
	t.Helper()
	if g := built.GroupOf(st); g != nil {
		return g
	}
	if a, ok := st.(interface{ AppendsGroups() bool }); ok && !a.AppendsGroups() {
		t.Skip("the store's backend appends no groups")
	}
	t.Skip("the store does not append built groups by its own methods")
	return nil
}

// group builds n streams of id at versions from, from+1, …, with the
// request IDs prefix-<version>.
func group(id factum.AggregateID, from, n int, prefix string) []*factum.EventStream {
	ss := make([]*factum.EventStream, n)
	for i := range ss {
		v := from + i
		ss[i] = stream(id, v, fmt.Sprintf("%s-%d", prefix, v), 1+i%2)
	}
	return ss
}

// marked returns ss as built streams.
func marked(ss []*factum.EventStream) []built.Stream {
	bs := make([]built.Stream, len(ss))
	for i, s := range ss {
		bs[i] = built.Mark(s)
	}
	return bs
}

// clone returns a copy of s, for an append that must not touch s.
func clone(s *factum.EventStream) *factum.EventStream {
	c := *s
	return &c
}

// storedRequests counts the streams of ss whose request the store holds
// for their aggregate.
func storedRequests(t *testing.T, st eventstore.Store, ss []*factum.EventStream) int {
	t.Helper()
	n := 0
	for _, s := range ss {
		ok, err := st.RequestExists(context.Background(), s.AggregateID, s.RequestID)
		if err != nil {
			t.Fatalf("request exists %s: %v", s.RequestID, err)
		}
		if ok {
			n++
		}
	}
	return n
}

// testGroupAppends appends groups of one and of several streams: each is
// stored whole, with increasing positions, and read back by Load, Lookup
// and ReadLog, in version order.
func testGroupAppends(t *testing.T, st eventstore.Store) {
	g := groups(t, st)
	f := newFixture(t)
	ctx := context.Background()
	tail := logTail(t, st)
	id := f.ID("group").WithTenant("tenant-a")
	var all []*factum.EventStream
	for _, n := range []int{1, 4, 1, 3} {
		ss := group(id, len(all)+1, n, "req")
		if err := g.AppendBuiltGroup(ctx, marked(ss)); err != nil {
			t.Fatalf("append a group of %d from version %d: %v", n, ss[0].Version, err)
		}
		for _, s := range ss {
			if s.Position.IsZero() {
				t.Fatalf("version %d has no log position after its group's append", s.Version)
			}
		}
		all = append(all, ss...)
	}
	for i := 1; i < len(all); i++ {
		if !all[i-1].Position.Less(all[i].Position) {
			t.Fatalf("positions of versions %d and %d: %v then %v", i, i+1, all[i-1].Position, all[i].Position)
		}
	}
	got := load(t, st, id)
	if len(got) != len(all) {
		t.Fatalf("loaded %d streams, want %d", len(got), len(all))
	}
	for i, s := range all {
		sameStream(t, got[i], s)
		found, err := st.Lookup(ctx, id, s.RequestID)
		if err != nil {
			t.Fatalf("lookup %s: %v", s.RequestID, err)
		}
		sameStream(t, found, s)
	}
	logTailPast(t, st, all[len(all)-1].ID)
	var logged []factum.EventStream
	for _, s := range readLogFrom(t, st, tail, 3) {
		if s.AggregateID.Aggregate == f.Named.Aggregate {
			logged = append(logged, s)
		}
	}
	if len(logged) != len(all) {
		t.Fatalf("the log holds %d of the groups' streams, want %d", len(logged), len(all))
	}
	for i, s := range all {
		sameStream(t, logged[i], s)
	}
}

// testGroupRefusals appends groups the store refuses: nothing of them is
// stored, and the error is the one Append returns for the stream refused.
func testGroupRefusals(t *testing.T, st eventstore.Store) {
	g := groups(t, st)
	f := newFixture(t)
	cases := []struct {
		name    string
		make    func(id factum.AggregateID) []*factum.EventStream
		refused int // the index of the stream refused
		code    factum.Code
	}{
		{"first version taken", func(id factum.AggregateID) []*factum.EventStream { return group(id, 2, 3, "new") }, 0, factum.CodeEventVersionConflict},
		{"gap before the group", func(id factum.AggregateID) []*factum.EventStream { return group(id, 4, 2, "new") }, 0, factum.CodeEventVersionConflict},
		{"creating an existing aggregate", func(id factum.AggregateID) []*factum.EventStream { return group(id, 1, 3, "new") }, 0, factum.CodeDuplicateAggregateID},
		{"first request stored", func(id factum.AggregateID) []*factum.EventStream {
			ss := group(id, 3, 3, "new")
			ss[0].RequestID = "req-2"
			return ss
		}, 0, factum.CodeDuplicateRequestID},
		{"third request stored", func(id factum.AggregateID) []*factum.EventStream {
			ss := group(id, 3, 4, "new")
			ss[2].RequestID = "req-1"
			return ss
		}, 2, factum.CodeDuplicateRequestID},
		{"last request stored", func(id factum.AggregateID) []*factum.EventStream {
			ss := group(id, 3, 3, "new")
			ss[2].RequestID = "req-2"
			return ss
		}, 2, factum.CodeDuplicateRequestID},
		{"another tenant's aggregate", func(id factum.AggregateID) []*factum.EventStream {
			return group(id.WithTenant("intruder"), 3, 2, "new")
		}, 0, factum.CodeTenantMismatch},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			id := f.ID("refused-" + factum.DeriveID(c.name)[:8]).WithTenant("tenant-a")
			s1, s2, tail := appendTwo(t, st, id, 1)
			ss := c.make(id)
			err := g.AppendBuiltGroup(context.Background(), marked(ss))
			bad := ss[c.refused]
			fe := wantRefused(t, err, c.code, bad)
			wroteNothing(t, st, id, tail, s1, s2)
			// Append refuses the stream alone with the same error.
			alone := st.Append(context.Background(), clone(bad))
			ae := kit.WantCode(t, alone, c.code)
			if ae.Error() != fe.Error() {
				t.Fatalf("group error %q, Append's %q", fe.Error(), ae.Error())
			}
		})
	}
}

// testGroupMalformed appends groups of the wrong shape: IllegalArgument,
// and nothing stored.
func testGroupMalformed(t *testing.T, st eventstore.Store) {
	g := groups(t, st)
	f := newFixture(t)
	cases := []struct {
		name string
		make func(id factum.AggregateID) []*factum.EventStream
	}{
		{"empty", func(factum.AggregateID) []*factum.EventStream { return nil }},
		{"gap in versions", func(id factum.AggregateID) []*factum.EventStream {
			return append(group(id, 1, 2, "r"), stream(id, 4, "r-4", 1))
		}},
		{"versions out of order", func(id factum.AggregateID) []*factum.EventStream {
			ss := group(id, 1, 3, "r")
			ss[1], ss[2] = ss[2], ss[1]
			return ss
		}},
		{"version repeated", func(id factum.AggregateID) []*factum.EventStream {
			return append(group(id, 1, 2, "r"), stream(id, 2, "r-x", 1))
		}},
		{"two aggregates", func(id factum.AggregateID) []*factum.EventStream {
			other := id
			other.ID += "-other"
			return []*factum.EventStream{stream(id, 1, "r-1", 1), stream(other, 2, "r-2", 1)}
		}},
		{"two aggregate types", func(id factum.AggregateID) []*factum.EventStream {
			other := id
			other.Aggregate += "_other"
			return []*factum.EventStream{stream(id, 1, "r-1", 1), stream(other, 2, "r-2", 1)}
		}},
		{"two tenants", func(id factum.AggregateID) []*factum.EventStream {
			return []*factum.EventStream{stream(id, 1, "r-1", 1), stream(id.WithTenant("tenant-b"), 2, "r-2", 1)}
		}},
		{"duplicate request IDs", func(id factum.AggregateID) []*factum.EventStream {
			ss := group(id, 1, 3, "r")
			ss[2].RequestID = ss[0].RequestID
			return ss
		}},
		{"an invalid stream", func(id factum.AggregateID) []*factum.EventStream {
			ss := group(id, 1, 3, "r")
			ss[1].Events = nil
			return ss
		}},
		{"too many streams", func(id factum.AggregateID) []*factum.EventStream {
			return group(id, 1, eventstore.MaxGroup+1, "r")
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			id := f.ID("malformed-" + factum.DeriveID(c.name)[:8])
			ss := c.make(id)
			kit.WantCode(t, g.AppendBuiltGroup(context.Background(), marked(ss)), factum.CodeIllegalArgument)
			for _, s := range ss {
				if got := load(t, st, s.AggregateID); len(got) != 0 {
					t.Fatalf("the malformed group stored %d streams of %s", len(got), s.AggregateID)
				}
			}
		})
	}
	// A group may hold the most streams there are.
	id := f.ID("largest")
	if err := g.AppendBuiltGroup(context.Background(), marked(group(id, 1, eventstore.MaxGroup, "r"))); err != nil {
		t.Fatalf("a group of %d streams: %v", eventstore.MaxGroup, err)
	}
	if got := load(t, st, id); len(got) != eventstore.MaxGroup {
		t.Fatalf("a group of %d streams stored %d", eventstore.MaxGroup, len(got))
	}
}

// testGroupCancelled appends a group under a context already ended: an
// error, and nothing stored.
func testGroupCancelled(t *testing.T, st eventstore.Store) {
	g := groups(t, st)
	f := newFixture(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for _, n := range []int{1, 3} {
		id := f.ID(fmt.Sprintf("cancelled-%d", n))
		ss := group(id, 1, n, "r")
		if err := g.AppendBuiltGroup(ctx, marked(ss)); err == nil {
			t.Fatalf("a group of %d appended under a cancelled context", n)
		}
		if got := load(t, st, id); len(got) != 0 {
			t.Fatalf("a group of %d under a cancelled context stored %d streams", n, len(got))
		}
		if n := storedRequests(t, st, ss); n != 0 {
			t.Fatalf("a group under a cancelled context stored %d requests", n)
		}
	}
}
