package nats

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/engine"
	"github.com/factum-go/factum/eventstore"
)

// cancelAwareStore refuses an append whose context ended, as a database
// does: a command cut off before its append is not stored.
type cancelAwareStore struct{ eventstore.Store }

func (s cancelAwareStore) Append(ctx context.Context, st *factum.EventStream) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	return s.Store.Append(ctx, st)
}

// idInPartition returns an aggregate ID of partition n of count.
func idInPartition(t testing.TB, n, count int) string {
	t.Helper()
	for i := range 1000 {
		if id := fmt.Sprintf("t-%d", i); PartitionOf(id, count) == n {
			return id
		}
	}
	t.Fatalf("no aggregate ID in partition %d", n)
	return ""
}

// startHolding starts the fleet's instance name with the commands held
// matches (held inside their processing, before the handler with before,
// else after it) waiting until free is called, at the latest when the
// test ends, before the instance stops: a failure must not leave a lane
// held. It returns once the shares are fair.
func (f *fleet) startHolding(name string, held func(cmd *factum.Command) bool, before bool) (e *engine.Engine, free func()) {
	f.t.Helper()
	release := make(chan struct{})
	free = sync.OnceFunc(func() { close(release) })
	hold := func(instance string, cmd *factum.Command) {
		if instance == name && held(cmd) {
			<-release
		}
	}
	if before {
		f.probe.before = hold
	} else {
		f.probe.hold = hold
	}
	e = f.start(name)
	f.t.Cleanup(free)
	f.balanced()
	return e, free
}

// request matches the command of the request.
func request(id string) func(cmd *factum.Command) bool {
	return func(cmd *factum.Command) bool { return cmd.RequestID == id }
}

// waitQuiet waits until every instance of the fleet is idle and the
// command stream holds nothing.
func (f *fleet) waitQuiet(t *testing.T) {
	t.Helper()
	waitFor(t, 60*time.Second, "every instance to be idle and the stream empty", func() bool {
		f.mu.Lock()
		buses := make([]*Bus, 0, len(f.engines))
		for _, e := range f.engines {
			buses = append(buses, e.Bus().(*Bus))
		}
		f.mu.Unlock()
		for _, b := range buses {
			if !b.Idle() {
				return false
			}
		}
		return stored(t, f) == 0
	})
}

// waitHeld waits until the command suffix of every aggregate of ids is
// under way, once, at instance.
func (f *fleet) waitHeld(t *testing.T, ids []string, suffix, instance string) {
	t.Helper()
	waitFor(t, 30*time.Second, "each "+suffix+" to be held", func() bool {
		for _, id := range ids {
			if f.probe.times(id+"-"+suffix, instance) != 1 {
				return false
			}
		}
		return true
	})
}

// givenUp waits until bus gives one of its partitions up and returns it.
func givenUp(t *testing.T, bus *Bus, partitions int) int {
	t.Helper()
	given := -1
	waitFor(t, 30*time.Second, "a to give a partition up", func() bool {
		for n := range partitions {
			if bus.claimOf(n) == 0 {
				given = n
				return true
			}
		}
		return false
	})
	return given
}

// requestsOf returns the request IDs of the aggregate's streams in the
// fleet's store, in order.
func (f *fleet) requestsOf(t testing.TB, id string) []string {
	t.Helper()
	streams := f.streamsOf(t, id)
	got := make([]string, len(streams))
	for i, s := range streams {
		got[i] = s.RequestID
	}
	return got
}

// Commands accepted by their partition's owner (LocalFirst: SENT, stored
// nowhere) and still queued behind a slow one when the partition changes
// hands are handed over to the stream, not dropped: each is processed
// once, in the order sent, by the next owner (a new instance the
// partition is rebalanced to, or this one again). The slow one, cut off
// by the end of its claim, is processed once too: if the cut came before
// its append it is handed over with the others, else it is not.
func TestQueuedLocalCommandsSurviveAHandOver(t *testing.T) {
	const partitions, queued = 2, 5
	for _, tc := range []struct {
		name      string
		rebalance bool // start a second instance; else release and take the partition again by hand
		before    bool // the slow command is held before its append, else after it
	}{
		{"rebalanced/cut-after-the-append", true, false},
		{"rebalanced/cut-before-the-append", true, true},
		{"released-and-taken-again", false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFleet(t, sharedWorld(t, partitions, 3*time.Second), LocalFirst)
			f.store.Store = cancelAwareStore{Store: f.store.Store}
			a, free := f.startHolding("a", func(cmd *factum.Command) bool { return cmd.RequestID == cmd.AggregateID.ID+"-r0" }, tc.before)
			// Until a claim's consumer delivered what the stream held, its
			// local commands are published: they must be queued here.
			waitFor(t, 30*time.Second, "the claims to catch up", func() bool { return settled(t, a) })
			bus := a.Bus().(*Bus)

			ids := make([]string, partitions)
			requests := map[string][]string{}
			for n := range partitions {
				ids[n] = idInPartition(t, n, partitions)
				for i := range queued + 1 {
					req := fmt.Sprintf("%s-r%d", ids[n], i)
					if _, err := a.Gateway().Send(context.Background(), tallyCommand(ids[n], req)); err != nil {
						t.Fatal(err)
					}
					requests[ids[n]] = append(requests[ids[n]], req)
				}
			}
			if got := stored(t, f); got != 0 {
				t.Fatalf("%d commands on the stream, want none: the owner's commands were not queued locally", got)
			}
			waitFor(t, 10*time.Second, "the commands to be queued", func() bool { return bus.busy.Load() == partitions*(queued+1) })

			var given int // the partition a gives up
			if tc.rebalance {
				f.start("b")
				waitFor(t, 30*time.Second, "a to give a partition up", func() bool {
					for n := range partitions {
						if bus.claimOf(n) == 0 {
							given = n
							return true
						}
					}
					return false
				})
			} else {
				given = PartitionOf(ids[0], partitions)
				go bus.onRelease(given) // as the lease goroutine does when it gives the partition up
				waitFor(t, 10*time.Second, "the release", func() bool { return bus.claimOf(given) == 0 })
			}
			free()
			if !tc.rebalance {
				waitFor(t, 10*time.Second, "the lane to pass the queued commands", func() bool { return bus.busy.Load() == 0 })
				token, ok := f.nodes["a"].parts.Owns(given)
				if !ok {
					t.Fatal("the partitions gave the partition up")
				}
				bus.onAcquire(given, token) // taken again: a new consumer delivers what the stream holds
			}
			f.waitQuiet(t)

			for _, id := range ids {
				streams := f.streamsOf(t, id)
				got := make([]string, len(streams))
				for i, s := range streams {
					got[i] = s.RequestID
					if s.Version != i+1 {
						t.Errorf("aggregate %s: version %d at position %d", id, s.Version, i+1)
					}
				}
				if fmt.Sprint(got) != fmt.Sprint(requests[id]) {
					t.Errorf("aggregate %s (partition %d, given up: %v): stored %v, want %v", id, PartitionOf(id, partitions), PartitionOf(id, partitions) == given, got, requests[id])
				}
			}
			f.probe.mu.Lock()
			for _, id := range ids {
				for _, req := range requests[id][1:] {
					total := 0
					for _, times := range f.probe.by[req] {
						total += times
					}
					if total != 1 {
						t.Errorf("%s processed %d times (%v), want once", req, total, f.probe.by[req])
					}
				}
			}
			if tc.rebalance {
				moved := requests[ids[given]][1:]
				if by := f.probe.by[moved[0]]; by["b"] != 1 {
					t.Errorf("%s, queued at a when a gave its partition up, processed by %v, want by b", moved[0], by)
				}
			}
			f.probe.mu.Unlock()
			f.probe.check(t)
		})
	}
}

// stored returns how many commands the fleet's command stream holds.
func stored(t testing.TB, f *fleet) uint64 {
	t.Helper()
	f.mu.Lock()
	var n *node
	for _, name := range f.order {
		if f.nodes[name] != nil {
			n = f.nodes[name]
			break
		}
	}
	f.mu.Unlock()
	s, err := n.js.Stream(context.Background(), f.w.stream)
	if err != nil {
		t.Fatal(err)
	}
	info, err := s.Info(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return info.State.Msgs
}
