package event

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/factum-go/factum"
)

// Lease is a consumer group's lease: while an instance holds it, that
// instance alone consumes the group. Token is the fencing token: it grows
// with every new holder, and a checkpoint saved under a token that is no
// longer current is refused.
type Lease struct {
	Group  factum.Function
	Holder string
	Token  uint64
	// Expires is when the store lets another holder take the lease, by the
	// store's clock. A holder stops acting before then by its own clock:
	// the TTL less a margin after it sent the request that granted it.
	Expires time.Time
}

// Errors of a LeaseStore.
var (
	// ErrLeaseHeld is returned by Acquire when another holder's lease is
	// in force.
	ErrLeaseHeld = errors.New("event: the group's lease is held by another instance")
	// ErrLeaseLost is returned by Renew and SaveFencedCheckpoint when the
	// lease expired or another holder took it.
	ErrLeaseLost = errors.New("event: the group's lease was lost")
)

// LeaseStore grants consumer-group leases and saves checkpoints fenced by
// them, so that instances sharing a database run each consumer group once.
// Expiry is judged by the store's clock at the moment of each write. All
// methods are safe for concurrent use.
type LeaseStore interface {
	// Acquire grants the group's lease to holder for ttl when no lease is
	// in force (none yet, released, or expired), with a token above every
	// earlier one; ErrLeaseHeld otherwise, even for the same holder name.
	Acquire(ctx context.Context, group factum.Function, holder string, ttl time.Duration) (Lease, error)
	// Renew extends a lease still in force by ttl from now, keeping its
	// token; ErrLeaseLost when it is not in force.
	Renew(ctx context.Context, l Lease, ttl time.Duration) (Lease, error)
	// Release ends a lease still in force, so another holder can take it
	// at once; a lease no longer current is left alone (no error).
	Release(ctx context.Context, l Lease) error
	// SaveFencedCheckpoint saves the group's position, as
	// CheckpointStore.SaveCheckpoint does, only while l is in force,
	// atomically with that check; ErrLeaseLost otherwise.
	SaveFencedCheckpoint(ctx context.Context, l Lease, pos factum.Position) error
}

// ValidateLease checks a lease request's parts, as every LeaseStore does.
func ValidateLease(group factum.Function, holder string, ttl time.Duration) error {
	if err := ValidateGroup(group); err != nil {
		return err
	}
	if err := factum.ValidateID("lease holder", holder); err != nil {
		return err
	}
	if ttl < time.Millisecond {
		return factum.IllegalArgument(fmt.Sprintf("lease TTL %v is under a millisecond", ttl))
	}
	return nil
}

// MemoryLeases is an in-memory LeaseStore over a MemoryCheckpoints, for
// tests and for one process.
type MemoryLeases struct {
	cps *MemoryCheckpoints
	now func() time.Time

	mu     sync.Mutex
	leases map[factum.Function]Lease
	tokens map[factum.Function]uint64
}

// NewMemoryLeases returns leases whose fenced saves go to cps.
func NewMemoryLeases(cps *MemoryCheckpoints) *MemoryLeases {
	return &MemoryLeases{cps: cps, now: time.Now, leases: map[factum.Function]Lease{}, tokens: map[factum.Function]uint64{}}
}

// inForce reports whether l is the group's current lease and unexpired.
// m.mu must be held.
func (m *MemoryLeases) inForce(l Lease) bool {
	cur, ok := m.leases[l.Group]
	return ok && cur.Token == l.Token && cur.Holder == l.Holder && m.now().Before(cur.Expires)
}

// Acquire implements LeaseStore.
func (m *MemoryLeases) Acquire(ctx context.Context, group factum.Function, holder string, ttl time.Duration) (Lease, error) {
	if err := ctx.Err(); err != nil {
		return Lease{}, err
	}
	if err := ValidateLease(group, holder, ttl); err != nil {
		return Lease{}, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	now := m.now()
	if cur, ok := m.leases[group]; ok && now.Before(cur.Expires) {
		return Lease{}, ErrLeaseHeld
	}
	m.tokens[group]++
	l := Lease{Group: group, Holder: holder, Token: m.tokens[group], Expires: now.Add(ttl)}
	m.leases[group] = l
	return l, nil
}

// Renew implements LeaseStore.
func (m *MemoryLeases) Renew(ctx context.Context, l Lease, ttl time.Duration) (Lease, error) {
	if err := ctx.Err(); err != nil {
		return Lease{}, err
	}
	if err := ValidateLease(l.Group, l.Holder, ttl); err != nil {
		return Lease{}, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if !m.inForce(l) {
		return Lease{}, ErrLeaseLost
	}
	l.Expires = m.now().Add(ttl)
	m.leases[l.Group] = l
	return l, nil
}

// Release implements LeaseStore.
func (m *MemoryLeases) Release(ctx context.Context, l Lease) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.inForce(l) {
		delete(m.leases, l.Group)
	}
	return nil
}

// SaveFencedCheckpoint implements LeaseStore.
func (m *MemoryLeases) SaveFencedCheckpoint(ctx context.Context, l Lease, pos factum.Position) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if !m.inForce(l) {
		return ErrLeaseLost
	}
	return m.cps.SaveCheckpoint(ctx, l.Group, pos)
}
