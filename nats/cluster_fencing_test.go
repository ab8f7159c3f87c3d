package nats

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/factum-go/factum"
)

// A command still running on an instance when its partition changes hands
// never overlaps the next owner's commands of its aggregate: giving a
// partition up (rebalancing) cancels the context of the commands running
// on it and deletes the lease only once they ended, and a claim that
// cannot be renewed cancels them when its validity ends, before anyone
// can take it. The blocked command is left unacknowledged, so the next
// owner processes it; each command is stored once, without a version
// conflict. On the old code a give-up waited a tenth of the lease for the
// running command and then deleted the lease, and a lapse cancelled
// nothing: the next owner ran the aggregate's commands beside it.
func TestAPartitionChangesHandsOnlyAfterItsCommandsEnded(t *testing.T) {
	const lease = 2 * time.Second
	for _, tc := range []struct {
		name string
		// honour: the blocked handler returns when its context ends;
		// otherwise only when the test lets it.
		honour bool
		// cut: the holder loses NATS (its renewals fail) instead of
		// giving the partition up to a newcomer.
		cut bool
	}{
		{name: "given up, the handler stops on its context", honour: true},
		{name: "given up, the handler ignores its context"},
		{name: "lapsed, the handler stops on its context", honour: true, cut: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFleet(t, inProcessWorld(t, 2, lease), LocalNever)
			id := idInPartition(t, 1, 2) // partition 1: the one a gives up to b
			entered := make(chan struct{})
			release := make(chan struct{})
			var releaseOnce sync.Once
			free := func() { releaseOnce.Do(func() { close(release) }) }
			t.Cleanup(free)
			f.probe.block = func(ctx context.Context, instance string, cmd *factum.Command) error {
				if instance != "a" || cmd.RequestID != "blocker" {
					return nil
				}
				close(entered)
				if !tc.honour {
					<-release
					return nil
				}
				select {
				case <-ctx.Done():
					return fmt.Errorf("the handler gave up: %w", ctx.Err())
				case <-release:
					return nil
				}
			}
			a := f.start("a")
			f.balanced()
			for _, req := range []string{"blocker", "next"} {
				if _, err := a.Gateway().Send(context.Background(), tallyCommand(id, req)); err != nil {
					t.Fatal(err)
				}
				if req == "blocker" {
					<-entered
				}
			}
			if tc.cut {
				f.crash("a")
				// b starts once a no longer owns the partition: a must
				// have stopped by itself, with no one to hand over to.
				waitFor(t, 30*time.Second, "a's lease to lapse", func() bool {
					_, ok := f.nodes["a"].parts.Owns(1)
					return !ok
				})
				f.start("b")
			} else {
				f.start("b")
				waitFor(t, 30*time.Second, "a to give partition 1 up", func() bool {
					_, ok := f.nodes["a"].parts.Owns(1)
					return !ok
				})
				if !tc.honour {
					// The window in which the old code let b take the
					// partition beside the running command.
					time.Sleep(lease / 2)
					free()
				}
			}
			waitFor(t, 60*time.Second, "b to process the aggregate's commands", func() bool {
				return f.probe.times("next", "b") == 1
			})
			// The probe counts a command as it enters the handler, before
			// its append: wait for the store before checking it.
			waitFor(t, 30*time.Second, "the aggregate's two commands to be stored", func() bool {
				return len(f.streamsOf(t, id)) >= 2
			})
			free()
			f.probe.check(t)
			f.checkStored(map[string][]string{id: {"blocker", "next"}})
			if c := f.store.conflicts.Load(); c != 0 {
				t.Errorf("%d version conflicts: the event store's check, not the fencing, stopped a second writer", c)
			}
		})
	}
}
