package nats

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/engine"
)

// Two instances on one store and one NATS server: each sends commands for
// aggregates of both instances' partitions; the ones for the other's
// partitions cross to it. Every command is processed exactly once, by the
// owner of its partition, with no version conflict.
func TestCommandsCrossToTheirOwner(t *testing.T) {
	for _, local := range []LocalMode{LocalFirst, LocalNever, LocalDurable} {
		t.Run(fmt.Sprint("local=", local), func(t *testing.T) {
			f := newFleet(t, sharedWorld(t, 8, 3*time.Second), local)
			f.start("a")
			f.start("b")
			f.balanced()
			const aggregates, per = 16, 10
			requests := map[string][]string{}
			owners := map[string]string{}
			for i := range aggregates {
				id := fmt.Sprintf("tally-%d", i)
				owners[id] = f.owner(id)
				for j := range per {
					requests[id] = append(requests[id], fmt.Sprintf("req-%d-%d", i, j))
				}
			}
			if o := owners["tally-0"]; o == "" {
				t.Fatal("no owner")
			}
			var wg sync.WaitGroup
			for i := range aggregates {
				id := fmt.Sprintf("tally-%d", i)
				wg.Go(func() {
					for j, req := range requests[id] {
						via := []string{"a", "b"}[(i+j)%2]
						if err := send(context.Background(), func() *engine.Engine { return f.engine(via) }, id, req, 30*time.Second); err != nil {
							t.Errorf("%s via %s: %v", req, via, err)
						}
					}
				})
			}
			wg.Wait()
			f.checkStored(requests)
			f.probe.check(t)
			f.probe.mu.Lock()
			for id, reqs := range requests {
				for _, r := range reqs {
					by := f.probe.by[r]
					if len(by) != 1 || by[owners[id]] != 1 {
						t.Errorf("request %s of %s (owner %s) processed %v", r, id, owners[id], by)
					}
				}
			}
			f.probe.mu.Unlock()
			if c := f.store.conflicts.Load(); c != 0 {
				t.Errorf("%d version conflicts", c)
			}
		})
	}
}

// 2×200 concurrent commands on one aggregate through two instances: one
// writer, so no version conflict and no retry storm.
func TestContendedAggregateHasOneWriter(t *testing.T) {
	f := newFleet(t, sharedWorld(t, 8, 3*time.Second), LocalFirst)
	f.start("a")
	f.start("b")
	f.balanced()
	const per = 200
	var wg sync.WaitGroup
	requests := map[string][]string{}
	var mu sync.Mutex
	for _, via := range []string{"a", "b"} {
		for j := range per {
			req := fmt.Sprintf("%s-%d", via, j)
			mu.Lock()
			requests["hot"] = append(requests["hot"], req)
			mu.Unlock()
			wg.Go(func() {
				if err := send(context.Background(), func() *engine.Engine { return f.engine(via) }, "hot", req, 60*time.Second); err != nil {
					t.Errorf("%s: %v", req, err)
				}
			})
		}
	}
	wg.Wait()
	f.checkStored(requests)
	f.probe.check(t)
	if c := f.store.conflicts.Load(); c != 0 {
		t.Errorf("%d version conflicts on the contended aggregate, want 0 (one writer)", c)
	}
	_ = factum.CodeOk
}
