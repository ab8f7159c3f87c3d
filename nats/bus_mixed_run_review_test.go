package nats

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/factum-go/factum"
)

// storeOne stores, through bus's connection, a message of one command of
// the aggregate id with the request ID req, as another instance's send
// does, on the aggregate's command subject.
func storeOne(t *testing.T, bus *Bus, id, req string) {
	t.Helper()
	cmd := tallyCommand(id, req)
	cmd.AllowCreate = true
	cmd.AggregateID.Tenant = factum.DefaultTenant
	msg, err := encodeCommand(bus.cfg.SubjectPrefix, &cmd, PartitionOf(id, len(bus.state)))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := bus.put(context.Background(), msg); err != nil {
		t.Fatal(err)
	}
}

// Delivered commands, each its own message, queued behind one another run
// together; when the claim is cut mid-run (the partition given up) with
// LocalNever or LocalDurable, where nothing is handed over, the messages
// up to the last command that succeeded have final outcomes and are
// acknowledged, as each was when it ran alone: here r1, refused at a
// before r2 was appended, is not decided again by the next owner, which
// would append it behind r2. Each aggregate so stores pre, r0, r2, r3,
// r4, in order, whether its partition was given up or kept.
func TestCutRunOfDeliveredCommandsKeepsTheOutcomesBeforeTheLastSuccess(t *testing.T) {
	for _, c := range []struct {
		name  string
		local LocalMode
	}{{"LocalNever", LocalNever}, {"LocalDurable", LocalDurable}} {
		t.Run(c.name, func(t *testing.T) {
			const partitions = 2
			f := newFleet(t, sharedWorld(t, partitions, 3*time.Second), c.local)
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
			for _, id := range ids {
				for _, r := range []string{"pre", "r0", "r1", "r2", "r3", "r4"} {
					storeOne(t, bus, id, id+"-"+r)
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
					t.Errorf("%s processed %v, want once, at a (its refusal stands)", id+"-r1", by)
				}
			}
		})
	}
}
