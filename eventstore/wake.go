package eventstore

import "sync/atomic"

// wakeup wakes every waiter at once: wait returns a channel that the next
// wake closes. wake is one atomic load when nobody waits, so appends pay
// nothing for a log nobody tails. The zero value is ready.
type wakeup struct {
	ch atomic.Pointer[chan struct{}] // nil when nobody waits
}

// wait returns a channel closed by the next wake. A waiter takes it before
// it looks at the log, so an append it does not see closes the channel.
func (w *wakeup) wait() <-chan struct{} {
	for {
		if p := w.ch.Load(); p != nil {
			return *p
		}
		ch := make(chan struct{})
		if w.ch.CompareAndSwap(nil, &ch) {
			return ch
		}
	}
}

// wake wakes every waiter.
func (w *wakeup) wake() {
	if p := w.ch.Load(); p != nil && w.ch.CompareAndSwap(p, nil) {
		close(*p)
	}
}
