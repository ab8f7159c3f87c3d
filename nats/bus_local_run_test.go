package nats

import (
	"context"
	"fmt"
	"maps"
	"sync"
	"testing"
	"time"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/command"
	"github.com/factum-go/factum/engine"
)

// The fixtures of the tests that cut a run of a's short: a holds its
// commands of one request suffix, b starts, a gives a partition up, and
// the tests compare what each aggregate stores and who processed what.

// holdPre holds each aggregate's command of request "<id>-pre" until the
// returned func is called or the test ends, so that the commands sent
// behind it queue in its lane.
func (f *fleet) holdPre(t *testing.T) (open func()) {
	t.Helper()
	pre := make(chan struct{})
	open = sync.OnceFunc(func() { close(pre) })
	t.Cleanup(open)
	f.probe.hold = func(instance string, cmd *factum.Command) {
		if cmd.RequestID == cmd.AggregateID.ID+"-pre" {
			<-pre
		}
	}
	return open
}

// refuseAt makes each aggregate's command of request "<id>-<suffix>" end
// refused (IllegalArgument) at instance, its handler not run.
func (f *fleet) refuseAt(instance, suffix string) {
	f.probe.block = func(_ context.Context, in string, cmd *factum.Command) error {
		if in == instance && cmd.RequestID == cmd.AggregateID.ID+"-"+suffix {
			return factum.IllegalArgument(suffix + " is refused at " + instance)
		}
		return nil
	}
}

// startHeld starts a, holding each aggregate's command of request
// "<id>-<suffix>" before its handler until free is called, and waits for
// a's claims to catch up.
func (f *fleet) startHeld(t *testing.T, suffix string) (a *engine.Engine, bus *Bus, free func()) {
	t.Helper()
	a, free = f.startHolding("a", func(cmd *factum.Command) bool { return cmd.RequestID == cmd.AggregateID.ID+"-"+suffix }, true)
	waitFor(t, 30*time.Second, "the claims to catch up", func() bool { return settled(t, a) })
	return a, a.Bus().(*Bus), free
}

// mustTakeRuns stops the test when bus's executor takes no runs: a test
// of runs would check nothing.
func mustTakeRuns(t *testing.T, bus *Bus) {
	t.Helper()
	if bus.runs == nil {
		t.Fatal("the executor takes no runs: the test would check nothing")
	}
}

// sendVia returns a func that sends, through a's gateway, the command of
// aggregate id with request "<id>-<r>", stopping the test when it fails.
func sendVia(t *testing.T, a *engine.Engine) func(id, r string) {
	return func(id, r string) {
		t.Helper()
		if _, err := a.Gateway().Send(context.Background(), tallyCommand(id, id+"-"+r)); err != nil {
			t.Fatal(err)
		}
	}
}

// waitQueued waits until bus counts n jobs in its lanes.
func waitQueued(t *testing.T, bus *Bus, n int64) {
	t.Helper()
	waitFor(t, 10*time.Second, fmt.Sprintf("%d jobs in the lanes", n), func() bool { return bus.busy.Load() == n })
}

// cutA waits until a (whose Bus is bus) holds the command of request
// "<id>-<held>" of every aggregate of ids, one in each partition, starts
// b, waits for a to give one of the partitions up, frees a's held
// commands and waits for the fleet to be quiet; it returns the partition
// given up.
func (f *fleet) cutA(t *testing.T, bus *Bus, ids []string, held string, free func()) (given int) {
	t.Helper()
	f.waitHeld(t, ids, held, "a")
	f.start("b")
	given = givenUp(t, bus, len(ids))
	free()
	f.waitQuiet(t)
	return given
}

// sendPre sends, through send, the command "<id>-pre" of each aggregate
// of ids and waits until a holds them all; it returns, for each
// aggregate, the requests "<id>-<r>" of want, in order, pre first.
func (f *fleet) sendPre(t *testing.T, ids []string, send func(id, r string), want ...string) map[string][]string {
	t.Helper()
	requests := map[string][]string{}
	for _, id := range ids {
		for _, r := range append([]string{"pre"}, want...) {
			requests[id] = append(requests[id], id+"-"+r)
		}
		send(id, "pre")
	}
	f.waitHeld(t, ids, "pre", "a")
	return requests
}

// checkRequests checks that each aggregate of ids stores the requests
// want[id], in order; ids[given] is the one of the partition given up.
func (f *fleet) checkRequests(t *testing.T, ids []string, given int, want map[string][]string) {
	t.Helper()
	for n, id := range ids {
		if got := f.requestsOf(t, id); fmt.Sprint(got) != fmt.Sprint(want[id]) {
			t.Errorf("aggregate %s (given up: %v): stored %v, want %v", id, n == given, got, want[id])
		}
	}
}

// checkOnce checks that the command of request req was processed once by
// instance and, with only, by no other instance; why says what the
// command is, for the failure.
func (f *fleet) checkOnce(t *testing.T, req, instance string, only bool, why string) {
	t.Helper()
	f.probe.mu.Lock()
	by := maps.Clone(f.probe.by[req])
	f.probe.mu.Unlock()
	if by[instance] != 1 || only && len(by) != 1 {
		t.Errorf("%s, %s, processed %v, want once by %s", req, why, by, instance)
	}
}

// checkRunFormed checks that a command started while another of its
// aggregate was under way on its instance: that a run formed.
func (f *fleet) checkRunFormed(t *testing.T) {
	t.Helper()
	f.probe.mu.Lock()
	defer f.probe.mu.Unlock()
	if f.probe.overlaps == 0 {
		t.Error("no command started while another of its aggregate was under way: no run formed")
	}
}

// Commands accepted here (LocalFirst) queued behind one another of their
// aggregate run as one run; when the claim is cut mid-run, the members
// after the last one that succeeded are handed over, in order, and the
// ones before it stand (here r1, failed on a): a later member was
// appended, so handing an earlier one over would store it behind that
// one. Each aggregate so stores pre, r0, r2, r3, r4, in order: the run of
// the partition a gave up ends at b, the other's at a.
func TestLocalRunCutMidwayHandsOverOnlyAfterTheLastSuccess(t *testing.T) {
	const partitions = 2
	f := newFleet(t, sharedWorld(t, partitions, 3*time.Second), LocalFirst)
	openPre := f.holdPre(t)
	f.refuseAt("a", "r1")
	a, bus, free := f.startHeld(t, "r3")
	mustTakeRuns(t, bus)
	ids := idsApart(t, bus, partitions)
	want := map[string][]string{}
	// r1's PROCESSED answer, awaited past its SENT: a refusal decided
	// before a later command of its run was appended is final, so it is
	// answered as refused, never as an unknown outcome to retry (a retry
	// would be decided behind the later command).
	var r1mu sync.Mutex
	r1 := map[string]command.Result{}
	var r1wg sync.WaitGroup
	for _, id := range ids {
		for _, r := range []string{"pre", "r0", "r1", "r2", "r3", "r4"} {
			if r == "r1" {
				sent := make(chan error, 1)
				r1wg.Go(func() {
					first := true
					for res, err := range a.Gateway().SendAndWaitStream(context.Background(), tallyCommand(id, id+"-r1"), command.Wait(factum.StageProcessed)) {
						if first {
							first = false
							sent <- err
							if err != nil {
								return
							}
							continue
						}
						r1mu.Lock()
						r1[id] = res
						r1mu.Unlock()
					}
				})
				if err := <-sent; err != nil {
					t.Fatal(err)
				}
				continue
			}
			if _, err := a.Gateway().Send(context.Background(), tallyCommand(id, id+"-"+r)); err != nil {
				t.Fatal(err)
			}
			if r != "r1" {
				want[id] = append(want[id], id+"-"+r)
			}
		}
	}
	waitQueued(t, bus, 2*6) // pre in process and the rest queued
	openPre()
	given := f.cutA(t, bus, ids, "r3", free)
	r1wg.Wait()
	for _, id := range ids {
		if res := r1[id]; res.Code != factum.CodeIllegalArgument {
			t.Errorf("%s-r1 answered %s %q, want its refusal, IllegalArgument", id, res.Code, res.Message)
		}
	}
	f.checkRequests(t, ids, given, want)
	f.checkRunFormed(t)
	for _, id := range ids {
		f.checkOnce(t, id+"-r1", "a", true, "its failure standing")
	}
	// Its chain may have started at a before the cut (a run's commands
	// start one after another's start), but it was appended at b.
	f.checkOnce(t, ids[given]+"-r4", "b", false, "after the cut at a")
}
