package eventstoretest

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/eventstore"
)

// HeldRead is a backend whose first log read reads, then waits for
// Release before it returns: through a front end, a shared read in
// flight whose page predates what is appended meanwhile. Tests use it to
// show what a reader arriving during that read is answered. Its other
// methods are the wrapped backend's.
type HeldRead struct {
	eventstore.Backend
	first   atomic.Bool
	reads   atomic.Int64
	entered chan struct{}
	release chan struct{}
	once    sync.Once
}

// HoldFirstRead returns b with its first log read held.
func HoldFirstRead(b eventstore.Backend) *HeldRead {
	return &HeldRead{Backend: b, entered: make(chan struct{}), release: make(chan struct{})}
}

// ReadLog reads b's log; the first call returns only after Release.
func (h *HeldRead) ReadLog(ctx context.Context, after factum.Position, limit int) ([]factum.EventStream, error) {
	h.reads.Add(1)
	if !h.first.CompareAndSwap(false, true) {
		return h.Backend.ReadLog(ctx, after, limit)
	}
	page, err := h.Backend.ReadLog(ctx, after, limit)
	close(h.entered)
	<-h.release
	return page, err
}

// Entered is closed once the first read has read and is held.
func (h *HeldRead) Entered() <-chan struct{} { return h.entered }

// Release lets the first read return; later calls do nothing.
func (h *HeldRead) Release() { h.once.Do(func() { close(h.release) }) }

// Reads returns how many log reads began.
func (h *HeldRead) Reads() int64 { return h.reads.Load() }

// Run runs a reader under test (run, such as a drained consumer's Run)
// while the first read is held: once the reader has read the log for
// itself or returned, or after 2 s (it waits for the held read, as a
// reader sharing it does), it calls whileHeld, if not nil, then releases
// the held read and waits up to 10 s for run to return, failing t if it
// does not or returns an error.
func (h *HeldRead) Run(t testing.TB, run func() error, whileHeld func()) {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- run() }()
	for deadline := time.Now().Add(2 * time.Second); h.reads.Load() < 2 && len(done) == 0 && time.Now().Before(deadline); {
		time.Sleep(time.Millisecond)
	}
	if whileHeld != nil {
		whileHeld()
	}
	h.Release()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the reader under test did not return")
	}
}
