package event

import (
	"context"
	"sync"
	"time"

	"github.com/factum-go/factum"
)

// idleWait is a consumer's wait at the log's end, made once per Run and
// used for every wait. A consumer that keeps up with the appends waits
// about once per stream it handles; a timeout context and a Drain hook per
// wait (a timer, a context, its done channel and a registration in the
// drain context's children, then their removal) cost more than the wait
// itself. So one context, cancelled by the consumer's own context and by
// Drain, carries every wait, and one timer, reset for each wait and
// stopped after it, cancels it when the wait's time is up; only then is
// the context replaced, which a consumer woken by appends never needs.
//
// The timer may fire just as a wait ends (Stop then cannot stop it) and
// cancel the context meant for the next wait: that wait returns at once,
// and the consumer reads the log once more for nothing and replaces the
// context before it waits again. A wait is therefore never longer than
// asked, only at most once shorter.
type idleWait struct {
	base   context.Context // the consumer's context, also ended by Drain
	stop   func()          // ends base and its Drain hook
	timer  *time.Timer     // cancels the current wait context when it fires
	mu     sync.Mutex      // guards cancel against the timer's goroutine
	ctx    context.Context // the current wait context, a child of base
	cancel context.CancelFunc
}

// newIdleWait returns the waits of a consumer running under ctx, which
// Drain (drain's end) also ends.
func newIdleWait(ctx, drain context.Context) *idleWait {
	base, cancel := context.WithCancel(ctx)
	unhook := context.AfterFunc(drain, cancel)
	w := &idleWait{base: base, stop: func() { unhook(); cancel() }}
	w.ctx, w.cancel = context.WithCancel(base)
	w.timer = time.AfterFunc(time.Hour, w.expire)
	w.timer.Stop()
	return w
}

// expire cancels the wait context in use; it runs on the timer's
// goroutine.
func (w *idleWait) expire() {
	w.mu.Lock()
	cancel := w.cancel
	w.mu.Unlock()
	cancel()
}

// wait waits on log for a stream after pos, at most d, and reports
// whether the time was up (the timer ended the wait). It returns early
// when the consumer's context ends or Drain is called.
func (w *idleWait) wait(log LogReader, pos factum.Position, d time.Duration) (timedOut bool) {
	if w.ctx.Err() != nil {
		if w.base.Err() != nil {
			return false
		}
		// Cancelled by the timer: a fresh context for this wait.
		ctx, cancel := context.WithCancel(w.base)
		w.mu.Lock()
		w.ctx, w.cancel = ctx, cancel
		w.mu.Unlock()
	}
	w.timer.Reset(d)
	_ = log.WaitLog(w.ctx, pos)
	w.timer.Stop()
	return w.ctx.Err() != nil && w.base.Err() == nil
}

// close releases the waits' context and timer.
func (w *idleWait) close() {
	w.timer.Stop()
	w.stop()
	w.mu.Lock()
	cancel := w.cancel
	w.mu.Unlock()
	cancel()
}
