package command

import (
	"hash/maphash"
	"sync"
	"time"

	"github.com/factum-go/factum"
)

// Sink receives wait signals. Processors and event functions emit PROCESSED
// and branch-stage signals into it; Signal must not block. Waiters is the
// in-process sink; a transport (NATS) implements it by forwarding signals
// to the instance whose gateway waits.
type Sink interface {
	Signal(s factum.Signal)
}

const waiterShards = 64

// Waiters routes wait signals to the gateway calls waiting for them, by
// command ID. A signal for a command nobody waits for is dropped: waits are
// observations, and the outcome stays in the event store. Waiters is safe
// for concurrent use.
type Waiters struct {
	seed   maphash.Seed
	shards [waiterShards]waiterShard
	// free holds ended waits for reuse, with their channel and timer, so
	// that a wait allocates nothing in the common case.
	free sync.Pool
}

type waiterShard struct {
	mu sync.Mutex
	m  map[string]*waiter
}

// NewWaiters returns an empty routing table.
func NewWaiters() *Waiters {
	w := &Waiters{seed: maphash.MakeSeed()}
	for i := range w.shards {
		w.shards[i].m = make(map[string]*waiter)
	}
	return w
}

// waiter collects the signals of one command until its wait ends. Delivery
// appends under the mutex and pokes notify, so a signal never blocks the
// lane that sends it, however slow the reader. Waiters are reused: id says
// which command a waiter serves now, and a signal for any other command (a
// late one that found the waiter in the table before its wait ended) is
// dropped.
type waiter struct {
	mu      sync.Mutex
	id      string // guarded by mu; "" while the waiter is free
	signals []factum.Signal
	inline  [2]factum.Signal // room for the common PROCESSED-only wait
	notify  chan struct{}    // capacity 1
	timer   *time.Timer      // the wait's timeout; stopped between waits
}

func (w *Waiters) shard(commandID string) *waiterShard {
	return &w.shards[maphash.String(w.seed, commandID)%waiterShards]
}

// Signal implements Sink: it hands s to the wait for s.CommandID, if any.
func (w *Waiters) Signal(s factum.Signal) {
	sh := w.shard(s.CommandID)
	sh.mu.Lock()
	wt := sh.m[s.CommandID]
	sh.mu.Unlock()
	if wt == nil {
		return
	}
	w.deliver(wt, s)
}

// deliver appends s to wt's signals if wt still waits for s's command.
func (w *Waiters) deliver(wt *waiter, s factum.Signal) {
	wt.mu.Lock()
	if wt.id != s.CommandID {
		wt.mu.Unlock()
		return // the wait ended meanwhile and the waiter serves another
	}
	wt.signals = append(wt.signals, s)
	wt.mu.Unlock()
	select {
	case wt.notify <- struct{}{}:
	default:
	}
}

// Len returns the number of waits in progress.
func (w *Waiters) Len() int {
	n := 0
	for i := range w.shards {
		sh := &w.shards[i]
		sh.mu.Lock()
		n += len(sh.m)
		sh.mu.Unlock()
	}
	return n
}

// register starts a wait for commandID. A command ID already waited for is
// an IllegalArgument error: two waits cannot share one command's signals.
func (w *Waiters) register(commandID string) (*waiter, error) {
	wt, _ := w.free.Get().(*waiter)
	if wt == nil {
		wt = &waiter{notify: make(chan struct{}, 1)}
		wt.signals = wt.inline[:0]
	}
	wt.mu.Lock()
	wt.id = commandID
	wt.mu.Unlock()
	sh := w.shard(commandID)
	sh.mu.Lock()
	if _, busy := sh.m[commandID]; busy {
		sh.mu.Unlock()
		w.release(wt)
		return nil, factum.IllegalArgument("command " + commandID + " is already being waited for; send a new command (same request ID, new command ID)")
	}
	sh.m[commandID] = wt
	sh.mu.Unlock()
	return wt, nil
}

// remove ends the wait for commandID and frees wt for reuse.
func (w *Waiters) remove(commandID string, wt *waiter) {
	sh := w.shard(commandID)
	sh.mu.Lock()
	if sh.m[commandID] == wt {
		delete(sh.m, commandID)
	}
	sh.mu.Unlock()
	w.release(wt)
}

// release resets wt and puts it back in the pool. A signal that looked wt
// up before it left the table sees the cleared id and is dropped; a stale
// poke on notify only makes the next wait look at an empty list once.
func (w *Waiters) release(wt *waiter) {
	wt.mu.Lock()
	wt.id = ""
	clear(wt.signals)
	if cap(wt.signals) > len(wt.inline) {
		wt.signals = wt.inline[:0] // do not keep a burst's large array
	} else {
		wt.signals = wt.signals[:0]
	}
	wt.mu.Unlock()
	select {
	case <-wt.notify:
	default:
	}
	if wt.timer != nil {
		wt.timer.Stop()
	}
	w.free.Put(wt)
}

// expiry starts the wait's timeout and returns the channel that fires when
// it passes. The timer is the waiter's own, reused across waits: timers of
// Go 1.23 and later never deliver a value from before Stop or Reset.
func (wt *waiter) expiry(d time.Duration) <-chan time.Time {
	if wt.timer == nil {
		wt.timer = time.NewTimer(d)
	} else {
		wt.timer.Reset(d)
	}
	return wt.timer.C
}

// drain moves the signals received so far into buf and returns it.
func (wt *waiter) drain(buf []factum.Signal) []factum.Signal {
	wt.mu.Lock()
	buf = append(buf, wt.signals...)
	clear(wt.signals)
	wt.signals = wt.signals[:0]
	wt.mu.Unlock()
	return buf
}
