package event_test

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/event"
)

// acquireClock is a lease store that records when its first Acquire was
// sent, which is where a holder's first fence starts.
type acquireClock struct {
	event.LeaseStore
	sent atomic.Int64 // Unix nanoseconds
}

func (a *acquireClock) Acquire(ctx context.Context, g factum.Function, h string, ttl time.Duration) (event.Lease, error) {
	a.sent.CompareAndSwap(0, time.Now().UnixNano())
	return a.LeaseStore.Acquire(ctx, g, h, ttl)
}

// pastFirstFence sleeps until the fence of the first lease a took under
// ttl has lapsed: its TTL less the fifth kept as the margin.
func (a *acquireClock) pastFirstFence(ttl time.Duration) {
	time.Sleep(time.Until(time.Unix(0, a.sent.Load()).Add(ttl - ttl/5 + time.Millisecond)))
}

// handledSet is a processor's record of the streams its function handled.
type handledSet struct {
	mu  sync.Mutex
	ids map[string]bool
}

// holdingFirst returns the processor name that records every stream it
// handles, and holds the stream first with hold before recording it.
func holdingFirst(name, first string, hold func()) (*event.Processor, *handledSet) {
	h := &handledSet{ids: map[string]bool{}}
	p := event.MustProcessor("shop", name, factum.StageEventHandled,
		event.OnStream("count", func(ctx context.Context, s *factum.EventStream) error {
			if s.ID == first {
				hold()
			}
			h.mu.Lock()
			h.ids[s.ID] = true
			h.mu.Unlock()
			return nil
		}, nil))
	return p, h
}

// has reports whether the stream id was handled.
func (h *handledSet) has(id string) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.ids[id]
}

// count returns how many streams were handled.
func (h *handledSet) count() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.ids)
}
