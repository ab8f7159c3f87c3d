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

// lateRenewal is a slow lease store: its first renewal fails and its second
// is answered, granted, only once the consumer saves its checkpoint on
// stepping down, that is after the consumer's fence lapsed but before the
// store's lease expired (the renewal was sent in time).
type lateRenewal struct {
	acquireClock
	renewals atomic.Int32
	waiting  chan struct{} // closed when the second renewal awaits its answer
	answer   chan struct{} // closed by the save after it: answer it
	third    chan struct{} // closed when a third renewal is sent
	patience time.Duration // how long the save waits for the third renewal
	once     sync.Once
}

func newLateRenewal(ls event.LeaseStore, patience time.Duration) *lateRenewal {
	return &lateRenewal{acquireClock: acquireClock{LeaseStore: ls}, waiting: make(chan struct{}), answer: make(chan struct{}), third: make(chan struct{}), patience: patience}
}

func (l *lateRenewal) Renew(ctx context.Context, le event.Lease, ttl time.Duration) (event.Lease, error) {
	switch l.renewals.Add(1) {
	case 1:
		return event.Lease{}, errUnreachable
	case 2:
		close(l.waiting)
		select {
		case <-l.answer:
		case <-ctx.Done():
			return event.Lease{}, ctx.Err()
		}
	case 3:
		close(l.third)
	}
	return l.LeaseStore.Renew(ctx, le, ttl)
}

// SaveFencedCheckpoint answers the waiting renewal, then lets the
// consumer's renewer act on the answer before the consumer's run returns:
// a renewer that takes the grant sends a third renewal at its next tick;
// one that steps down sends none, and the save goes on after patience.
func (l *lateRenewal) SaveFencedCheckpoint(ctx context.Context, le event.Lease, pos factum.Position) error {
	if l.renewals.Load() >= 2 {
		l.once.Do(func() {
			close(l.answer)
			select {
			case <-l.third:
			case <-time.After(l.patience):
			}
		})
	}
	return l.LeaseStore.SaveFencedCheckpoint(ctx, le, pos)
}

// A consumer whose fence lapsed while a renewal was on its way steps down
// and takes the lease again, also when the renewal is granted after the
// consumer's run saw the lapse: it does not take the late grant for a
// stop and return from Run with its context live, leaving the group
// unconsumed.
func TestALeasedConsumerRenewedAfterItsFenceLapsedGoesOn(t *testing.T) {
	const ttl = 400 * time.Millisecond
	store, cps := eventstore.NewMemory(), event.NewMemoryCheckpoints()
	ls := newLateRenewal(event.NewMemoryLeases(cps), ttl/2)
	ids := appendN(t, store, 3)
	// Hold the first stream until the fence has lapsed, with the second
	// renewal sent and unanswered.
	p, handled := holdingFirst("late_renewal", ids[0], func() {
		ls.pastFirstFence(ttl)
		select {
		case <-ls.waiting:
		case <-time.After(ttl):
		}
	})
	c, err := event.NewConsumer(p, event.Config{Log: store, Checkpoints: cps, Leases: ls, Holder: "a",
		LeaseTTL: ttl, BatchSize: 16, PollInterval: 10 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- c.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
	waitFor(t, "every stream handled", func() bool {
		select {
		case err := <-done:
			done <- err // for the cleanup
			t.Fatalf("Run returned %v while its context was live", err)
		default:
		}
		return handled.count() == len(ids)
	})
}
