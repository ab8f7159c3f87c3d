package eventstoretest

import (
	"context"
	"sync"
	"sync/atomic"
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

// AwaitOwnRead waits until a log read besides the held one began (a
// reader under test read for itself), or returned reports true (it is
// done), or d passed (it waits for the held read, as a reader sharing it
// does).
func (h *HeldRead) AwaitOwnRead(d time.Duration, returned func() bool) {
	for deadline := time.Now().Add(d); h.reads.Load() < 2 && !returned() && time.Now().Before(deadline); {
		time.Sleep(time.Millisecond)
	}
}
