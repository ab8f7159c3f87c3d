package event_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/event"
	"github.com/factum-go/factum/eventstore"
)

// unrenewable is a lease store whose renewals never reach it, as a store
// too slow to answer them in time; it records when the first Acquire was
// sent.
type unrenewable struct {
	event.LeaseStore
	sent atomic.Int64 // Unix nanoseconds
}

func (u *unrenewable) Acquire(ctx context.Context, g factum.Function, h string, ttl time.Duration) (event.Lease, error) {
	u.sent.CompareAndSwap(0, time.Now().UnixNano())
	return u.LeaseStore.Acquire(ctx, g, h, ttl)
}

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
	ls := &unrenewable{LeaseStore: event.NewMemoryLeases(cps)}
	ids := appendN(t, store, 3)
	var mu sync.Mutex
	handled := map[string]bool{}
	p := event.MustProcessor("shop", "stepped_down", factum.StageEventHandled,
		event.OnStream("count", func(ctx context.Context, s *factum.EventStream) error {
			if s.ID == ids[0] {
				// Hold the first stream until the fence has lapsed.
				time.Sleep(time.Until(time.Unix(0, ls.sent.Load()).Add(ttl - ttl/5 + time.Millisecond)))
			}
			mu.Lock()
			handled[s.ID] = true
			mu.Unlock()
			return nil
		}, nil))
	c, err := event.NewConsumer(p, event.Config{Log: store, Checkpoints: cps, Leases: ls, Holder: "a",
		LeaseTTL: ttl, BatchSize: 16, PollInterval: 10 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	c.Drain()
	if err := c.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	for i, id := range ids {
		if !handled[id] {
			t.Errorf("stream %d of %d left unhandled by a drain", i+1, len(ids))
		}
	}
}
