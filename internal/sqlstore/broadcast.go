package sqlstore

import (
	"context"
	"fmt"
	"sync"
	"time"
)

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

// Pause waits for d to pass or for a or b to be closed (a nil channel
// never is), whichever comes first. It returns ctx's error if ctx ends
// first.
func Pause(ctx context.Context, d time.Duration, a, b <-chan struct{}) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-a:
	case <-b:
	case <-t.C:
	case <-ctx.Done():
		return ctx.Err()
	}
	return nil
}

// LogError is the error of a look at the log of boundedContext: ctx's
// error when ctx ended (the look failed for that), else err wrapped.
func LogError(ctx context.Context, d *Dialect, boundedContext string, err error) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	return fmt.Errorf("%s: event store %s: %w", d.Name, boundedContext, err)
}
