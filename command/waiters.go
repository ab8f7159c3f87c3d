package command

import (
	"hash/maphash"
	"sync"

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
// lane that sends it, however slow the reader.
type waiter struct {
	mu      sync.Mutex
	signals []factum.Signal
	inline  [2]factum.Signal // room for the common PROCESSED-only wait
	notify  chan struct{}    // capacity 1
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
	wt.mu.Lock()
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
	wt := &waiter{notify: make(chan struct{}, 1)}
	wt.signals = wt.inline[:0]
	sh := w.shard(commandID)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if _, busy := sh.m[commandID]; busy {
		return nil, factum.IllegalArgument("command " + commandID + " is already being waited for; send a new command (same request ID, new command ID)")
	}
	sh.m[commandID] = wt
	return wt, nil
}

// remove ends the wait for commandID.
func (w *Waiters) remove(commandID string, wt *waiter) {
	sh := w.shard(commandID)
	sh.mu.Lock()
	if sh.m[commandID] == wt {
		delete(sh.m, commandID)
	}
	sh.mu.Unlock()
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
