package eventstore

import (
	"context"
	"errors"
	"sync"

	"github.com/factum-go/factum"
)

// sharedWait lets the readers waiting at the same position share one
// backend wait. Consumer groups at the log's end all wait after the same
// last stream; each waiting on its own made the backend look at the log
// once per group (on PostgreSQL a statement per look, repeated while a
// committed stream is not yet readable).
type sharedWait struct {
	mu sync.Mutex
	w  *waitCall // the wait in flight, or nil
}

// waitCall is one backend wait that readers at the same position share.
type waitCall struct {
	after factum.Position
	woken <-chan struct{} // the leader's: its wait returns when it closes
	done  chan struct{}   // closed when err is set
	err   error
}

// wait runs the backend's wait at position after, or joins the one in
// flight there. A joiner returns when the shared wait does (it returned
// nil: the log may hold a stream after the position), when woken is
// closed, or when its own ctx ends; when the shared wait ended on its own
// caller's error, or may have ended on a wake-up older than the joiner's
// call (see staleWake), the joiner waits again, leading if nobody does.
func (s *sharedWait) wait(ctx context.Context, lw LogWaiter, after factum.Position, woken <-chan struct{}) error {
	for {
		s.mu.Lock()
		w := s.w
		if w == nil {
			w = &waitCall{after: after, woken: woken, done: make(chan struct{})}
			s.w = w
			s.mu.Unlock()
			return s.lead(ctx, lw, w, woken)
		}
		s.mu.Unlock()
		if w.after != after {
			return lw.WaitLog(ctx, after, woken) // another position: alone
		}
		select {
		case <-w.done:
			if w.err == nil && !staleWake(w.woken, woken) {
				return nil
			}
			if err := ctx.Err(); err != nil {
				return err
			}
		case <-woken:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// errSharedWaitPanicked is a shared wait's error, for the readers waiting
// for it, when its backend wait panicked; they wait again.
var errSharedWaitPanicked = errors.New("eventstore: the shared wait panicked")

// lead runs the backend's wait w for the readers that join it, and ends
// it however the wait does: were a wait that panics (its caller may
// recover) left in flight, it would hold its joiners and every later
// waiter at its position.
func (s *sharedWait) lead(ctx context.Context, lw LogWaiter, w *waitCall, woken <-chan struct{}) (err error) {
	err = errSharedWaitPanicked
	defer func() {
		s.mu.Lock()
		s.w = nil
		w.err = err
		close(w.done)
		s.mu.Unlock()
	}()
	return lw.WaitLog(ctx, w.after, woken)
}

// staleWake reports whether a shared wait that returned nil may have
// returned only for its leader's wake-up, which a joiner holding woken
// has already had: the leader's woken is closed (an append returned after
// the leader began waiting) and the joiner's, taken later, is not. Taking
// that nil, the joiner would return while nothing new is readable, and a
// consumer would read an empty page and wait again, a spin. The joiner
// waits again instead; when the log does hold a stream, its own wait
// returns at once.
func staleWake(leader, joiner <-chan struct{}) bool {
	return leader != joiner && closed(leader) && !closed(joiner)
}

// closed reports whether ch is closed; a nil channel never is.
func closed(ch <-chan struct{}) bool {
	if ch == nil {
		return false
	}
	select {
	case <-ch:
		return true
	default:
		return false
	}
}
