package sqlstore

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/event"
)

// LeaseStatements are a dialect's lease statements, each judging expiry
// by the database's own rule, called by Leases with input it checked.
// Acquire answers event.ErrLeaseHeld when a live lease of another holder
// holds the group; Renew and SaveFenced answer event.ErrLeaseLost when l
// is no longer in force; Release of a lease not in force does nothing.
type LeaseStatements interface {
	Acquire(ctx context.Context, group factum.Function, holder string, ttl time.Duration) (event.Lease, error)
	Renew(ctx context.Context, l event.Lease, ttl time.Duration) (event.Lease, error)
	Release(ctx context.Context, l event.Lease) error
	SaveFenced(ctx context.Context, l event.Lease, pos factum.Position) error
}

// Leases are the lease methods of event.LeaseStore over a dialect's
// statements: they check the input, and wrap the statements' errors with
// the dialect's name and the operation, the contract's refusals
// (event.ErrLeaseHeld, event.ErrLeaseLost) aside, which come back as they
// are.
type Leases struct {
	d     *Dialect
	stmts LeaseStatements
}

// NewLeases returns the lease methods of d's stmts.
func NewLeases(d *Dialect, stmts LeaseStatements) Leases { return Leases{d, stmts} }

// Acquire implements event.LeaseStore.
func (ls Leases) Acquire(ctx context.Context, group factum.Function, holder string, ttl time.Duration) (event.Lease, error) {
	if err := event.ValidateLease(group, holder, ttl); err != nil {
		return event.Lease{}, err
	}
	l, err := ls.stmts.Acquire(ctx, group, holder, ttl)
	if err != nil {
		return event.Lease{}, ls.wrap(err, "%s: acquire the lease of %s: %w", group)
	}
	return l, nil
}

// Renew implements event.LeaseStore.
func (ls Leases) Renew(ctx context.Context, l event.Lease, ttl time.Duration) (event.Lease, error) {
	if err := event.ValidateLease(l.Group, l.Holder, ttl); err != nil {
		return event.Lease{}, err
	}
	renewed, err := ls.stmts.Renew(ctx, l, ttl)
	if err != nil {
		return event.Lease{}, ls.wrap(err, "%s: renew the lease of %s: %w", l.Group)
	}
	return renewed, nil
}

// Release implements event.LeaseStore.
func (ls Leases) Release(ctx context.Context, l event.Lease) error {
	if err := event.ValidateGroup(l.Group); err != nil {
		return err
	}
	if err := ls.stmts.Release(ctx, l); err != nil {
		return ls.wrap(err, "%s: release the lease of %s: %w", l.Group)
	}
	return nil
}

// SaveFencedCheckpoint implements event.LeaseStore.
func (ls Leases) SaveFencedCheckpoint(ctx context.Context, l event.Lease, pos factum.Position) error {
	if err := event.ValidateGroup(l.Group); err != nil {
		return err
	}
	if err := event.ValidatePosition(pos); err != nil {
		return err
	}
	if err := ls.stmts.SaveFenced(ctx, l, pos); err != nil {
		return ls.wrap(err, "%s: save checkpoint of %s at %s: %w", l.Group, pos)
	}
	return nil
}

// wrap returns err, not nil, as format says, after the dialect's name and
// args; the contract's refusals come back as they are.
func (ls Leases) wrap(err error, format string, args ...any) error {
	if errors.Is(err, event.ErrLeaseHeld) || errors.Is(err, event.ErrLeaseLost) {
		return err
	}
	return fmt.Errorf(format, append(append([]any{ls.d.Name}, args...), err)...)
}
