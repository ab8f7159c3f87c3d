package nats

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// One instance, then three, then two, under load from many clients across
// many aggregates: shares converge each time, every acknowledged command is
// stored exactly once with contiguous versions, and no aggregate is ever
// processed by two instances (or two commands) at once.
func TestRebalancingUnderLoadKeepsOneWriterPerAggregate(t *testing.T) {
	for _, local := range []LocalMode{LocalFirst, LocalNever, LocalDurable} {
		t.Run(fmt.Sprint("local=", local), func(t *testing.T) {
			f := newFleet(t, sharedWorld(t, 12, 3*time.Second), local)
			f.probe.delay = 5 * time.Millisecond // widens every window a second writer could use
			f.start("a")
			f.balanced()

			var mu sync.Mutex
			requests := map[string][]string{}
			var stop atomic.Bool
			var sent atomic.Int64
			var wg sync.WaitGroup
			const clients, aggregates = 16, 24
			for c := range clients {
				wg.Go(func() {
					for i := 0; !stop.Load(); i++ {
						id := fmt.Sprintf("tally-%d", rand.IntN(aggregates))
						req := fmt.Sprintf("c%d-%d", c, i)
						if err := send(context.Background(), f.pick, id, req, 60*time.Second); err != nil {
							t.Errorf("%s: %v", req, err)
							return
						}
						mu.Lock()
						requests[id] = append(requests[id], req)
						mu.Unlock()
						sent.Add(1)
					}
				})
			}
			progress := func() {
				t.Helper()
				from := sent.Load()
				waitFor(t, 60*time.Second, "commands to go on", func() bool { return sent.Load() >= from+50 })
			}
			progress()
			f.start("b")
			f.start("c")
			f.balanced()
			progress()
			f.stop("a")
			f.balanced()
			progress()
			stop.Store(true)
			wg.Wait()
			f.checkStored(requests)
			f.probe.check(t)
			t.Logf("%d commands; %d version conflicts during the rebalancing", sent.Load(), f.store.conflicts.Load())
		})
	}
}
