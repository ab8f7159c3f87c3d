package eventstore

import (
	"context"
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
	done  chan struct{} // closed when err is set
	err   error
}

// wait runs the backend's wait at position after, or joins the one in
// flight there. A joiner returns when the shared wait does (it returned
// nil: the log may hold a stream after the position), when woken is
// closed, or when its own ctx ends; when the shared wait ended on its own
// caller's error, the joiner waits again, leading if nobody does.
func (s *sharedWait) wait(ctx context.Context, lw LogWaiter, after factum.Position, woken <-chan struct{}) error {
	for {
		s.mu.Lock()
		w := s.w
		if w == nil {
			w = &waitCall{after: after, done: make(chan struct{})}
			s.w = w
			s.mu.Unlock()
			err := lw.WaitLog(ctx, after, woken)
			s.mu.Lock()
			s.w = nil
			w.err = err
			close(w.done)
			s.mu.Unlock()
			return err
		}
		s.mu.Unlock()
		if w.after != after {
			return lw.WaitLog(ctx, after, woken) // another position: alone
		}
		select {
		case <-w.done:
			if w.err == nil {
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
