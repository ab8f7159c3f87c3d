package nats

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// Begin and End from many goroutines while the partition is given up
// (Close) or its validity runs out: no Work begins once the end of the
// claim was reported (OnRelease), every Work begun has its context
// cancelled, and a give-up deletes the lease only after every Work begun
// under it ended, each of which looks at the lease before it ends.
func TestBeginAndEndRaceTheEndOfTheClaim(t *testing.T) {
	for _, end := range []string{"given up", "expired"} {
		t.Run(end, func(t *testing.T) {
			_, kv := connect(t, startServer(t).ClientURL(), "factum_leases")
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			var released atomic.Bool
			p, err := StartPartitions(ctx, PartitionsConfig{
				KeyValue: kv, Context: "shop", Partitions: 1, Instance: "a", Lease: 3 * time.Second,
				OnRelease: func(int) { released.Store(true) },
			})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = p.Close(context.Background()) })
			var token uint64
			waitFor(t, 30*time.Second, "a to own partition 0", func() bool {
				var ok bool
				token, ok = p.Owns(0)
				return ok
			})

			const workers, longEvery = 16, 1000
			var (
				begun, afterRelease atomic.Int64
				leaseGone           atomic.Int64 // Works that found the lease deleted before they ended
				wg                  sync.WaitGroup
			)
			parent := context.Background()
			for range workers {
				wg.Go(func() {
					for {
						before := released.Load()
						wctx, w, ok := p.Begin(parent, 0, token)
						if !ok {
							if before {
								return
							}
							continue
						}
						if before {
							afterRelease.Add(1)
						}
						if begun.Add(1)%longEvery == 0 && !before {
							// Work that runs until the claim ends, then
							// finds the lease still there.
							<-wctx.Done()
							if end == "given up" {
								if e, err := kv.Get(ctx, "shop.partition.0"); err != nil || string(e.Value()) != "a" {
									leaseGone.Add(1)
								}
							}
						}
						w.End()
					}
				})
			}
			waitFor(t, 30*time.Second, "work to be begun", func() bool { return begun.Load() >= workers/2*longEvery })
			switch end {
			case "given up":
				if err := p.Close(ctx); err != nil {
					t.Fatal(err)
				}
			case "expired":
				// The validity runs out as if no renewal landed: the
				// lease's timer fires. A renewal landing between the two
				// moves the validity on, and the expiry is tried again.
				waitFor(t, 30*time.Second, "the claim to expire", func() bool {
					p.mu.Lock()
					l := p.held[0]
					if l != nil {
						l.validUntil = time.Now().Add(-time.Millisecond)
					}
					p.mu.Unlock()
					if l != nil {
						p.expire(l)
					}
					return released.Load()
				})
			}
			// Long Works wait for their context: were one not cancelled
			// at the end of the claim, they would wait for ever.
			allEnded := make(chan struct{})
			go func() { wg.Wait(); close(allEnded) }()
			select {
			case <-allEnded:
			case <-time.After(30 * time.Second):
				t.Fatal("Works still wait for their context 30 s after the end of the claim")
			}
			if !released.Load() {
				t.Fatal("the end of the claim was not reported")
			}
			if n := afterRelease.Load(); n != 0 {
				t.Errorf("%d Works began after the end of the claim was reported", n)
			}
			if n := leaseGone.Load(); n != 0 {
				t.Errorf("%d Works found the lease deleted before they ended", n)
			}
			if _, _, ok := p.Begin(parent, 0, token); ok {
				t.Error("work began under the claim after it ended")
			}
		})
	}
}

// BenchmarkBeginEnd begins and ends work from parallel goroutines on 16
// partitions held with a lease valid for an hour, without NATS: the cost
// Partitions add to every command.
func BenchmarkBeginEnd(b *testing.B) {
	const partitions = 16
	p := &Partitions{held: map[int]*lease{}, leaving: map[int]*lease{}, kicks: make(chan struct{}, 1)}
	for n := range partitions {
		p.held[n] = &lease{n: n, token: 7, validUntil: time.Now().Add(time.Hour)}
	}
	parent := context.Background()
	var next atomic.Int64
	b.RunParallel(func(pb *testing.PB) {
		n := int(next.Add(1))
		for pb.Next() {
			n++
			ctx, w, ok := p.Begin(parent, n%partitions, 7)
			if !ok || ctx.Err() != nil {
				b.Error("no work began under the claim in force")
				return
			}
			w.End()
		}
	})
}

// The context a Work runs under is cancelled by the time the end of its
// claim is reported (OnRelease) or, for a claim that runs out of
// validity, by the time expire returns: a bus that finds the partition
// given up finds every command under way told so, and none of a run's
// later commands starts.
func TestTheEndOfAClaimCancelsItsWorkAtOnce(t *testing.T) {
	const partitions = 8
	for _, end := range []string{"given up", "expired"} {
		t.Run(end, func(t *testing.T) {
			p := &Partitions{held: map[int]*lease{}, leaving: map[int]*lease{}, kicks: make(chan struct{}, 1)}
			ctxs := make([]context.Context, partitions)
			var late []int
			p.cfg.OnRelease = func(n int) {
				if ctxs[n].Err() == nil {
					late = append(late, n)
				}
			}
			parent, cancel := context.WithCancel(context.Background())
			defer cancel()
			for n := range partitions {
				l := &lease{n: n, token: 7, validUntil: time.Now().Add(time.Hour)}
				p.held[n] = l
				ctx, w, ok := p.Begin(parent, n, 7)
				if !ok {
					t.Fatalf("no work began on partition %d under the claim in force", n)
				}
				defer w.End()
				ctxs[n] = ctx
				switch end {
				case "given up":
					p.giveUp([]*lease{l})
				case "expired":
					l.validUntil = time.Now().Add(-time.Millisecond)
					l.timer = time.NewTimer(time.Hour)
					p.expire(l)
					if ctx.Err() == nil {
						late = append(late, n)
					}
				}
			}
			if len(late) != 0 {
				t.Errorf("partitions %v: the claim ended with its work's context not yet cancelled", late)
			}
		})
	}
}
