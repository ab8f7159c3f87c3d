package built

import "context"

// GroupAppender is an event store that appends several built streams of
// one aggregate as one step: all of them or none.
//
// The aggregate executor uses it to commit the commands it decided one
// after another on one aggregate while an earlier append was in flight:
// each command's stream follows the one before it, so they stand or fall
// together.
type GroupAppender interface {
	Appender
	// AppendBuiltGroup appends ss, streams of one aggregate with
	// consecutive versions and distinct request IDs, in their order.
	// On nil every stream is appended. Otherwise none is, and the error
	// is what Append returns for the first stream the store refuses
	// (ErrEventVersionConflict, ErrDuplicateRequestID, ErrTenantMismatch,
	// ...), or, when the outcome is unknown (a store error, ctx ended),
	// the group is stored whole or not at all, never in part. A group of
	// the wrong shape (no streams, more than the store takes at once —
	// eventstore.MaxGroup for the module's stores —, two aggregates or
	// tenants, a gap in the versions, a request ID twice) is
	// IllegalArgument, and nothing is stored.
	AppendBuiltGroup(ctx context.Context, ss []Stream) error
	// AppendsGroups reports whether the store serves AppendBuiltGroup; a
	// store that says false fails every call to it.
	AppendsGroups() bool
}

// GroupOf returns store as a GroupAppender when it appends built streams
// by its own methods (Of) and serves groups; nil otherwise.
func GroupOf(store any) GroupAppender {
	if Of(store) == nil {
		return nil
	}
	g, ok := store.(GroupAppender)
	if !ok || !g.AppendsGroups() {
		return nil
	}
	return g
}
