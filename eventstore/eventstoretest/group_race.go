package eventstoretest

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/eventstore"
)

// testGroupRace appends, from several goroutines at once, groups and
// single streams to one aggregate, each at the version after the last one
// its goroutine loaded: most of them race for the same versions. After
// them the aggregate's versions run from 1 without a gap, every group is
// stored whole or not at all, and the log holds each stored group's
// streams next to each other, in version order.
func testGroupRace(t *testing.T, st eventstore.Store) {
	g := groups(t, st)
	f := newFixture(t)
	ctx := context.Background()
	id := f.ID("race")
	tail := logTail(t, st)
	mustAppend(t, st, stream(id, 1, "create", 1))

	const workers, attempts = 8, 16
	type try struct {
		ss  []*factum.EventStream
		err error
	}
	tries := make([][]try, workers)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(w), 7))
			<-start
			for a := range attempts {
				got, err := st.Load(ctx, id, 1, eventstore.MaxVersion)
				if err != nil {
					tries[w] = append(tries[w], try{err: err})
					return
				}
				// A single stream by Append, or a group of 1 to 4.
				n := rng.IntN(5)
				ss := group(id, len(got)+1, max(n, 1), fmt.Sprintf("w%d-a%d", w, a))
				if n == 0 {
					err = st.Append(ctx, ss[0])
				} else {
					err = g.AppendBuiltGroup(ctx, marked(ss))
				}
				tries[w] = append(tries[w], try{ss: ss, err: err})
			}
		})
	}
	close(start)
	wg.Wait()

	stored := load(t, st, id)
	for i, s := range stored {
		if s.Version != i+1 {
			t.Fatalf("stream %d of the aggregate has version %d: versions are not contiguous from 1", i, s.Version)
		}
	}
	byRequest := make(map[string]factum.EventStream, len(stored))
	for _, s := range stored {
		byRequest[s.RequestID] = s
	}
	appended := 0
	var whole [][]*factum.EventStream
	for w := range tries {
		for _, tr := range tries[w] {
			if tr.ss == nil {
				t.Fatalf("worker %d: load: %v", w, tr.err)
			}
			n := 0
			for _, s := range tr.ss {
				if got, ok := byRequest[s.RequestID]; ok {
					n++
					if got.ID != s.ID {
						t.Fatalf("request %s holds stream %s, want %s", s.RequestID, got.ID, s.ID)
					}
				}
			}
			switch {
			case tr.err == nil && n != len(tr.ss):
				t.Fatalf("a group of %d from version %d appended, but %d of its streams are stored", len(tr.ss), tr.ss[0].Version, n)
			case tr.err != nil && n != 0:
				t.Fatalf("a group of %d from version %d refused (%v), but %d of its streams are stored", len(tr.ss), tr.ss[0].Version, tr.err, n)
			case tr.err != nil && factum.CodeOf(tr.err) != factum.CodeEventVersionConflict:
				t.Fatalf("a group of %d from version %d: %v, want nil or EventVersionConflict", len(tr.ss), tr.ss[0].Version, tr.err)
			case tr.err == nil:
				appended += len(tr.ss)
				whole = append(whole, tr.ss)
			}
		}
	}
	t.Logf("%d groups and single streams stored, %d streams in all, of %d tries", len(whole), appended, workers*attempts)
	if appended+1 != len(stored) {
		t.Fatalf("the aggregate holds %d streams, the appends reported %d and the create", len(stored), appended)
	}

	// The log: the aggregate's streams in version order, and each group's
	// streams next to each other, whatever other cases append meanwhile.
	logTailPast(t, st, stored[len(stored)-1].ID)
	logged := readLogFrom(t, st, tail, 100)
	at := make(map[string]int, len(logged))
	last := 0
	for i, s := range logged {
		at[s.ID] = i
		if s.AggregateID.Aggregate != f.Named.Aggregate {
			continue
		}
		if s.Version != last+1 {
			t.Fatalf("the log holds version %d after version %d", s.Version, last)
		}
		last = s.Version
	}
	if last != len(stored) {
		t.Fatalf("the log holds %d versions of the aggregate, want %d", last, len(stored))
	}
	for _, ss := range whole {
		for k, s := range ss[1:] {
			if at[s.ID] != at[ss[k].ID]+1 {
				t.Fatalf("the log holds versions %d and %d of one group at %d and %d: not together",
					ss[k].Version, s.Version, at[ss[k].ID], at[s.ID])
			}
		}
	}
}
