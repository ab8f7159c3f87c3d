package event_test

import (
	"context"
	"testing"
	"time"

	"github.com/factum-go/factum/event"
	"github.com/factum-go/factum/eventstore"
)

// unrenewable is a lease store whose renewals never reach it, as a store
// too slow to answer them in time.
type unrenewable struct{ acquireClock }

func (u *unrenewable) Renew(context.Context, event.Lease, time.Duration) (event.Lease, error) {
	return event.Lease{}, errUnreachable
}

// A draining consumer whose fence lapsed steps down and gives its lease up,
// so that it takes the lease again at once and drains the log: its own
// lease, still in force at the store, is not taken for another instance's,
// which would make Run return with the log unconsumed.
func TestALeasedConsumerThatSteppedDownWhileDrainingDrainsTheLog(t *testing.T) {
	const ttl = time.Second
	store, cps := eventstore.NewMemory(), event.NewMemoryCheckpoints()
	ls := &unrenewable{acquireClock{LeaseStore: event.NewMemoryLeases(cps)}}
	ids := appendN(t, store, 3)
	// Hold the first stream until the fence has lapsed.
	p, handled := holdingFirst("stepped_down", ids[0], func() { ls.pastFirstFence(ttl) })
	c, err := event.NewConsumer(p, event.Config{Log: store, Checkpoints: cps, Leases: ls, Holder: "a",
		LeaseTTL: ttl, BatchSize: 16, PollInterval: 10 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	c.Drain()
	if err := c.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	for i, id := range ids {
		if !handled.has(id) {
			t.Errorf("stream %d of %d left unhandled by a drain", i+1, len(ids))
		}
	}
}
