package nats

import (
	"fmt"
	"testing"
	"time"
)

// A delivered batch whose claim is cut after a member failed and a later
// member was appended must not have the failed member appended behind
// that later one: the stream held it first, and the next owner, deciding
// it again on a state that holds the later member's events, would store
// the aggregate's commands out of their order (the rule a cut run keeps,
// see cutJobs: nothing before the last success is handed over). Here
// r1 fails at a, r2 is appended at a, r3 is cut: no aggregate may store
// r1 after r2. Only LocalFirst hands a batch's rest over: with
// LocalNever and LocalDurable, a batch cut off stays on the stream whole
// (no subject takes its rest ahead of the commands stored later), and
// the next owner decides r1 again after r2 (see the package doc).
func TestBatchCutAfterAFailureKeepsTheOrder(t *testing.T) {
	for _, local := range []LocalMode{LocalFirst} {
		t.Run(fmt.Sprint("local=", local), func(t *testing.T) { testBatchCutAfterAFailure(t, local) })
	}
}

func testBatchCutAfterAFailure(t *testing.T, local LocalMode) {
	const partitions = 2
	f := newFleet(t, sharedWorld(t, partitions, 3*time.Second), local)
	f.refuseAt("a", "r1")
	_, bus, free := f.startHeld(t, "r3")
	ids := idsApart(t, bus, partitions)
	for n := range partitions {
		var reqs []string
		for i := range 5 {
			reqs = append(reqs, fmt.Sprintf("%s-r%d", ids[n], i))
		}
		sendBatchMsg(t, bus, ids[n], reqs...)
	}
	given := f.cutA(t, bus, ids, "r3", free)
	for n, id := range ids {
		got := f.requestsOf(t, id)
		at := map[string]int{}
		for i, req := range got {
			at[req] = i
		}
		r1, ok1 := at[id+"-r1"]
		r2, ok2 := at[id+"-r2"]
		if !ok2 {
			t.Errorf("aggregate %s (given up: %v): stored %v, r2 missing", id, n == given, got)
			continue
		}
		if ok1 && r1 > r2 {
			t.Errorf("aggregate %s (given up: %v): stored %v: r1, failed at a and before r2 in the batch, appended after r2", id, n == given, got)
		}
	}
}
