package idempotencytest

import (
	"sync"
	"testing"
	"time"

	"github.com/factum-go/factum/idempotency"
)

// Harness is what a backend gives the kit: a way to build stores and,
// where the backend allows, powers the kit uses to reach its edges. Only
// New is required; a case that needs a missing power runs in the weaker
// form the backend allows.
type Harness struct {
	// New builds a store applying a policy. Each call builds a new
	// instance on the same backend (the same database or server), as a
	// second process would; the kit runs two at once against one key.
	New NewStore
	// NewClocked, when set, builds a store like New that judges expiry by
	// clock instead of the real time. The kit then moves time by hand
	// instead of sleeping. Backends judged by a server's clock (Redis,
	// PostgreSQL) leave it nil.
	NewClocked func(t *testing.T, p idempotency.Policy, clock func() time.Time) idempotency.Store
	// Hold, when set, takes the backend's own lock that every write of k
	// waits for (a row lock, the database's write lock) and returns once
	// it holds it; release lets the waiting writes go on. The record of k
	// exists when the kit calls Hold. Reads may wait for the lock too. The
	// kit uses it to make a write wait while time passes and others act.
	Hold func(t *testing.T, k idempotency.Key) (release func())
}

// Clock is a manual clock for Harness.NewClocked. It starts where told and
// moves only when advanced. It is safe for concurrent use.
type Clock struct {
	mu  sync.Mutex
	now time.Time
}

// NewClock returns a clock showing start.
func NewClock(start time.Time) *Clock { return &Clock{now: start} }

// Now returns the clock's time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// Advance moves the clock forward by d.
func (c *Clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}
