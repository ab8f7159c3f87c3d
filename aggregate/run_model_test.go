package aggregate_test

import (
	"fmt"
	"slices"
	"testing"

	"github.com/factum-go/factum"
	"pgregory.net/rapid"
)

// tallyCommand draws a command of the tally model: one of three
// aggregates, some repeating an earlier command's request, some expecting
// a version.
func tallyCommand(t *rapid.T, earlier []*factum.Command) *factum.Command {
	agg := fmt.Sprintf("t-%d", rapid.IntRange(0, 2).Draw(t, "aggregate"))
	var body any
	switch rapid.IntRange(0, 9).Draw(t, "kind") {
	case 0:
		body = openTally{}
	case 1, 2, 3, 4:
		body = addTally{Qty: rapid.IntRange(1, 5).Draw(t, "qty")}
	case 5, 6:
		body = takeTally{Qty: rapid.IntRange(1, 5).Draw(t, "qty")}
	case 7:
		// Keys of one aggregate: which of two aggregates claims a key
		// first is no order a dispatcher keeps.
		body = claimTally{Key: fmt.Sprintf("%s/k%d", agg, rapid.IntRange(0, 1).Draw(t, "key"))}
	case 8:
		body = skipTally{}
	default:
		body = addTally{Qty: 1}
	}
	c := factum.NewCommand(factum.NamedAggregate{Context: "runs", Aggregate: "tally"}.WithID(agg).WithTenant(factum.DefaultTenant), body)
	c.IsCreate = c.Name == factum.NameOf(openTally{})
	if len(earlier) > 0 && rapid.IntRange(0, 5).Draw(t, "repeat") == 0 {
		c.RequestID = earlier[rapid.IntRange(0, len(earlier)-1).Draw(t, "of")].RequestIDOrID()
	}
	if rapid.IntRange(0, 5).Draw(t, "expects") == 0 {
		c.ExpectedVersion = rapid.IntRange(1, 8).Draw(t, "version")
	}
	return &c
}

// clones returns copies of cmds for another world: a dispatcher owns
// what it is sent.
func clones(cmds []*factum.Command) []*factum.Command {
	out := make([]*factum.Command, len(cmds))
	for i, c := range cmds {
		cc := *c
		out[i] = &cc
	}
	return out
}

// A run's commands decided one after another and appended as one group
// get what one command at a time gets: the same signals (code, version,
// duplicate flag, event names), the same stored streams, the same states
// observed and effects, whatever becomes of the groups (refused, lost,
// committed with the answer lost).
func TestRunsMatchOneAtATime(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		faults := rapid.SliceOfN(rapid.IntRange(0, 9), 0, 12).Draw(rt, "faults")
		rounds := rapid.IntRange(1, 3).Draw(rt, "rounds")
		var batches [][]*factum.Command
		var all []*factum.Command
		for range rounds {
			n := rapid.IntRange(1, 30).Draw(rt, "commands")
			var batch []*factum.Command
			for range n {
				c := tallyCommand(rt, all)
				batch = append(batch, c)
				all = append(all, c)
			}
			batches = append(batches, batch)
		}
		for i, c := range all {
			rt.Logf("command %d: %s %+v on %s request %s expects %d", i, c.Name, c.Body, c.AggregateID.ID, c.RequestIDOrID()[len(c.RequestIDOrID())-4:], c.ExpectedVersion)
		}
		grouped := newGroupStore()
		grouped.fault = func(n int) groupFault {
			if n > len(faults) {
				return groupAppends
			}
			switch faults[n-1] {
			case 7:
				return groupRefused
			case 8:
				return groupLost
			case 9:
				return groupCommittedUnknown
			}
			return groupAppends
		}
		runs, one := newWorld(rt, grouped, 0), newWorld(rt, newGroupStore(), 1)
		defer runs.shutdown(rt)
		defer one.shutdown(rt)
		for _, b := range batches {
			runs.run(rt, clones(b))
			one.run(rt, clones(b))
		}
		g, _ := grouped.counts()
		rt.Logf("groups %v, faults %v", g, faults)
		for i, c := range all {
			got, n := runs.signal(c.ID)
			want, m := one.signal(c.ID)
			if n != 1 || m != 1 {
				rt.Fatalf("command %d (%s): %d signals with runs, %d one at a time", i, c.Name, n, m)
			}
			if got.Code != want.Code || got.AggregateVersion != want.AggregateVersion || got.Duplicate != want.Duplicate || !slices.Equal(got.EventNames, want.EventNames) {
				rt.Fatalf("command %d (%s on %s): with runs %s v%d dup=%v %v (%s), one at a time %s v%d dup=%v %v (%s)", i, c.Name, c.AggregateID.ID,
					got.Code, got.AggregateVersion, got.Duplicate, got.EventNames, got.Message,
					want.Code, want.AggregateVersion, want.Duplicate, want.EventNames, want.Message)
			}
		}
		for a := range 3 {
			id := factum.NamedAggregate{Context: "runs", Aggregate: "tally"}.WithID(fmt.Sprintf("t-%d", a)).WithTenant(factum.DefaultTenant)
			if got, want := runs.streams(rt, id), one.streams(rt, id); !slices.Equal(got, want) {
				rt.Fatalf("%s stores\n%v\nwith runs, and\n%v\none at a time", id.ID, got, want)
			}
		}
		if got, want := stateVersions(runs), stateVersions(one); !slices.Equal(got, want) {
			rt.Fatalf("states observed with runs %v, one at a time %v", got, want)
		}
		runs.claims.mu.Lock()
		one.claims.mu.Lock()
		defer runs.claims.mu.Unlock()
		defer one.claims.mu.Unlock()
		if fmt.Sprint(runs.claims.owner) != fmt.Sprint(one.claims.owner) {
			rt.Fatalf("claims %v with runs, %v one at a time", runs.claims.owner, one.claims.owner)
		}
	})
}

// stateVersions returns the states a world's executor observed, as
// aggregate and version, by aggregate in the order observed.
func stateVersions(w *world) []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	var out []string
	for a := range 3 {
		for _, st := range w.states {
			if st.ID.ID == fmt.Sprintf("t-%d", a) {
				out = append(out, fmt.Sprintf("%s@%d:%s", st.ID.ID, st.Version, st.State))
			}
		}
	}
	return out
}
