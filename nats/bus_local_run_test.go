package nats

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/command"
)

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
	pre := make(chan struct{})
	openPre := sync.OnceFunc(func() { close(pre) })
	t.Cleanup(openPre)
	f.probe.hold = func(instance string, cmd *factum.Command) {
		if cmd.RequestID == cmd.AggregateID.ID+"-pre" {
			<-pre
		}
	}
	f.probe.block = func(_ context.Context, instance string, cmd *factum.Command) error {
		if instance == "a" && cmd.RequestID == cmd.AggregateID.ID+"-r1" {
			return factum.IllegalArgument("r1 is refused at a")
		}
		return nil
	}
	a, free := f.startHolding("a", func(cmd *factum.Command) bool { return cmd.RequestID == cmd.AggregateID.ID+"-r3" }, true)
	waitFor(t, 30*time.Second, "the claims to catch up", func() bool { return settled(t, a) })
	bus := a.Bus().(*Bus)
	if bus.runs == nil {
		t.Fatal("the executor takes no runs: the test would check nothing")
	}
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
	waitFor(t, 10*time.Second, "pre in process and the rest queued", func() bool { return bus.busy.Load() == 2*6 })
	openPre()
	f.waitHeld(t, ids, "r3", "a")
	f.start("b")
	given := givenUp(t, bus, partitions)
	free()
	f.waitQuiet(t)
	r1wg.Wait()
	for _, id := range ids {
		if res := r1[id]; res.Code != factum.CodeIllegalArgument {
			t.Errorf("%s-r1 answered %s %q, want its refusal, IllegalArgument", id, res.Code, res.Message)
		}
	}
	for n, id := range ids {
		if got := f.requestsOf(t, id); fmt.Sprint(got) != fmt.Sprint(want[id]) {
			t.Errorf("aggregate %s (given up: %v): stored %v, want %v", id, n == given, got, want[id])
		}
	}
	f.probe.mu.Lock()
	defer f.probe.mu.Unlock()
	if f.probe.overlaps == 0 {
		t.Error("no command started while another of its aggregate was under way: no run formed")
	}
	for _, id := range ids {
		if by := f.probe.by[id+"-r1"]; len(by) != 1 || by["a"] != 1 {
			t.Errorf("%s processed %v, want once, at a (its failure stands)", id+"-r1", by)
		}
	}
	moved := ids[given] + "-r4"
	// Its chain may have started at a before the cut (a run's commands
	// start one after another's start), but it was appended at b.
	if by := f.probe.by[moved]; by["b"] != 1 {
		t.Errorf("%s, after the cut at a, processed %v, want once by b", moved, by)
	}
}
