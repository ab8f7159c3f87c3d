package event

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/factum-go/factum"
)

// waitingLog is a LogReader with an empty log: WaitLog blocks until its
// context ends, counting the calls and those whose context had ended
// before the call.
type waitingLog struct {
	mu    sync.Mutex
	calls int
	ended int // calls made with an ended context
}

func (l *waitingLog) ReadLog(context.Context, factum.Position, int) ([]factum.EventStream, error) {
	return nil, nil
}

func (l *waitingLog) WaitLog(ctx context.Context, _ factum.Position) error {
	l.mu.Lock()
	l.calls++
	if ctx.Err() != nil {
		l.ended++
	}
	l.mu.Unlock()
	<-ctx.Done()
	return ctx.Err()
}

// awaitCalls returns once WaitLog has been called n times.
func (l *waitingLog) awaitCalls(n int) {
	for {
		l.mu.Lock()
		calls := l.calls
		l.mu.Unlock()
		if calls >= n {
			return
		}
		time.Sleep(time.Millisecond)
	}
}

// A wait ends when its time is up, and the next one waits again on a live
// context: the one context the waits share is replaced after the timer
// cancelled it, or every wait after the first would return at once and a
// consumer at the log's end would spin.
func TestIdleWaitWaitsAgainAfterATimeout(t *testing.T) {
	drain, drained := context.WithCancel(context.Background())
	defer drained()
	w := newIdleWait(context.Background(), drain)
	defer w.close()
	log := &waitingLog{}
	if !w.wait(log, factum.Position{}, time.Millisecond) {
		t.Fatal("a wait the timer ended does not report its time up")
	}
	// The millisecond can be up before the first wait calls WaitLog, so
	// only the second call's context is checked.
	log.mu.Lock()
	endedBefore := log.ended
	log.mu.Unlock()
	done := make(chan bool)
	go func() { done <- w.wait(log, factum.Position{}, time.Hour) }()
	log.awaitCalls(2)
	drained()
	if <-done {
		t.Error("a wait Drain ended reports its time up")
	}
	log.mu.Lock()
	defer log.mu.Unlock()
	if log.calls != 2 || log.ended != endedBefore {
		t.Fatalf("WaitLog called %d times, the second with an ended context: %v; want 2 and false", log.calls, log.ended != endedBefore)
	}
}

// Drain and the consumer's context each end a wait in progress, however
// long it was to last, and later waits return at once.
func TestIdleWaitEndsOnDrainAndOnTheContext(t *testing.T) {
	for _, by := range []string{"drain", "context"} {
		t.Run(by, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			drain, drained := context.WithCancel(context.Background())
			defer drained()
			w := newIdleWait(ctx, drain)
			defer w.close()
			log := &waitingLog{}
			done := make(chan struct{})
			go func() {
				defer close(done)
				w.wait(log, factum.Position{}, time.Hour)
			}()
			log.awaitCalls(1)
			if by == "drain" {
				drained()
			} else {
				cancel()
			}
			<-done
			w.wait(log, factum.Position{}, time.Hour) // returns at once
			if log.calls != 1 {
				t.Fatalf("WaitLog called %d times after the end, want no call", log.calls-1)
			}
		})
	}
}
