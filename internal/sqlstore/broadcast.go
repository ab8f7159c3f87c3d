package sqlstore

import "sync"

// Broadcast wakes every waiter at once: Wait returns a channel that the
// next Wake closes. The zero value is ready; a Broadcast is safe for
// concurrent use.
type Broadcast struct {
	mu sync.Mutex
	ch chan struct{} // nil when nobody waits
}

// Wait returns a channel closed by the next Wake.
func (b *Broadcast) Wait() <-chan struct{} {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.ch == nil {
		b.ch = make(chan struct{})
	}
	return b.ch
}

// Wake wakes every waiter.
func (b *Broadcast) Wake() {
	b.mu.Lock()
	if b.ch != nil {
		close(b.ch)
		b.ch = nil
	}
	b.mu.Unlock()
}
