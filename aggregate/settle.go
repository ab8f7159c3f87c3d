package aggregate

import (
	"context"
	"errors"

	"github.com/factum-go/factum"
)

// rejected is the outcome of a command the handler, or one of its bound
// effects, refused.
func (p *processor[S]) rejected(ctx context.Context, cmd *factum.Command, e *entry[S], err error) outcome {
	if e.st.Version == 0 {
		// Caching an aggregate that does not exist would hide one created
		// elsewhere; a rejected command costs a load instead.
		return outcome{err: err}
	}
	p.cache.put(e)
	// A rejection may answer a retry whose first attempt already changed
	// the state; the store knows.
	if o, dup := p.duplicate(ctx, cmd); dup {
		return o
	}
	return outcome{err: err}
}

// duplicate looks the command's request up in the store and, if it was
// appended, returns that stream's outcome.
func (p *processor[S]) duplicate(ctx context.Context, cmd *factum.Command) (outcome, bool) {
	s, err := p.store.Lookup(ctx, cmd.AggregateID, cmd.RequestIDOrID())
	if err != nil || s.AggregateID.TenantOrDefault() != cmd.AggregateID.TenantOrDefault() {
		// Another tenant's stream is never this command's outcome.
		return outcome{}, false
	}
	return appended(&s, cmd), true
}

// appended returns the outcome of cmd whose request the store found
// appended as s.
func appended(s *factum.EventStream, cmd *factum.Command) outcome {
	names := make([]string, len(s.Events))
	for i := range s.Events {
		names[i] = s.Events[i].Name
	}
	// A stream of this very command (its own earlier attempt, whose write
	// committed although the attempt saw an error) is no duplicate.
	return outcome{version: s.Version, names: names, at: s.CreateTime, duplicate: s.CommandID != cmd.ID}
}

// unknown settles an append whose outcome is unknown by looking the request
// up. Appended: the outcome is that stream's and the effects stand. Not
// appended: the effects are undone and a transient error is retried. The
// store unreachable too: the effects are left in place (a retry of the
// command recognises them as its own) rather than taken away from a stream
// that may have been appended. A lookup answering another aggregate's
// stream (another tenant's, another ID or type: a store that fails to
// scope it) settles nothing either.
func (p *processor[S]) unknown(ctx context.Context, cmd *factum.Command, applied *Applied, err error) outcome {
	retry := cmd.ExpectedVersion == 0
	lctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), undoTimeout)
	defer cancel()
	s, lerr := p.store.Lookup(lctx, cmd.AggregateID, cmd.RequestIDOrID())
	switch {
	case lerr == nil && !sameAggregate(s.AggregateID, cmd.AggregateID):
		// Another aggregate's stream is never this command's outcome, nor
		// evidence that this one was not appended: the store settles
		// nothing, as when it is unreachable.
		return outcome{err: err, retrySafe: retry}
	case lerr == nil:
		return appended(&s, cmd)
	case errors.Is(lerr, factum.ErrNotFound):
		return undone(ctx, applied, outcome{err: err, retrySafe: retry})
	}
	return outcome{err: err, retrySafe: retry}
}

// sameAggregate reports whether a and b name one aggregate: one context,
// type and ID, in one tenant (an empty tenant is the default one).
func sameAggregate(a, b factum.AggregateID) bool {
	return a.NamedAggregate == b.NamedAggregate && a.ID == b.ID && a.TenantOrDefault() == b.TenantOrDefault()
}

// undone undoes what an attempt applied and returns o, failed with the
// undo's error if the undo failed (then it is not retried: the effects
// still stand, and a retry of the request recognises them).
func undone(ctx context.Context, applied *Applied, o outcome) outcome {
	if uerr := applied.Undo(ctx); uerr != nil && o.err != nil {
		// (A duplicate's outcome stands whatever became of this
		// attempt's effects: it is the request's.)
		o.err = errors.Join(o.err, uerr)
		o.conflict, o.retrySafe = false, false
	}
	return o
}
