package eventstore

import (
	"context"
	"errors"
	"fmt"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/internal/built"
)

// MaxGroup is the most streams one group append holds (see
// [GroupBackend]). A SQL backend writes a group in one statement or
// transaction, which this bounds; the aggregate executor commits a longer
// run of one aggregate's commands as several groups.
const MaxGroup = 64

// GroupBackend is the optional group append of a backend: several streams
// of one aggregate stored as one step, all of them or none. It has no
// generic fallback, as a loop of appends is not atomic: a front end over
// a backend without it serves no groups (Front.AppendsGroups).
//
// The front end has checked the group before it calls AppendGroup: the
// context is live, every stream is valid, ss holds 1 to MaxGroup streams
// of one aggregate (bounded context, type, ID and effective tenant) with
// consecutive versions, in version order, and distinct request IDs, in
// the store's bounded context.
type GroupBackend interface {
	// AppendGroup stores ss as the aggregate's next versions, as Append
	// stores each (the tenant set to the effective one, the Position
	// set), and answers Appended with refused -1; the group's streams
	// enter the log together, in version order. Or it stores none of them
	// and reports, with a nil error, the refusal of the first stream it
	// refuses (the one Append would report for that stream with the
	// streams before it stored) and that stream's index in ss. Failed
	// comes with an error saying why; the group may then be stored whole
	// or not at all (ctx ended while it was written), never in part.
	AppendGroup(ctx context.Context, ss []*factum.EventStream) (o Outcome, refused int, err error)
}

// AppendsGroups reports whether the backend has a group append
// ([GroupBackend]); AppendBuiltGroup fails every call when it has not.
func (f *Front) AppendsGroups() bool { return f.group != nil }

// AppendBuiltGroup appends streams the aggregate executor built, several
// of one aggregate, as one step: all of them or none (built.GroupAppender
// says what it guarantees). Of each stream it makes the checks AppendBuilt
// makes; of the group it checks the shape: 1 to MaxGroup streams of one
// aggregate, tenant included, with consecutive versions and distinct
// request IDs. A group that fails them is IllegalArgument and stores
// nothing. A group of one stream is that stream's append.
func (f *Front) AppendBuiltGroup(ctx context.Context, ss []built.Stream) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if f.group == nil {
		return factum.Errorf(factum.CodeIllegalState, "%s: the backend does not append groups: %w", f.name, errors.ErrUnsupported)
	}
	if len(ss) == 0 || len(ss) > MaxGroup {
		return factum.IllegalArgument(fmt.Sprintf("%s: a group of %d streams: want 1 to %d", f.name, len(ss), MaxGroup))
	}
	streams := make([]*factum.EventStream, len(ss))
	for i, b := range ss {
		if err := b.Validate(); err != nil {
			return fmt.Errorf("group stream %d: %w", i, err)
		}
		streams[i] = b.Stream()
	}
	if err := checkGroup(streams); err != nil {
		return err
	}
	if len(streams) == 1 {
		return f.append(ctx, streams[0])
	}
	if err := f.serves(streams[0].AggregateID.Context); err != nil {
		return err
	}
	o, i, err := f.group.AppendGroup(ctx, streams)
	switch {
	case o == Appended && err == nil:
		f.tail.appended()
		f.woken.wake()
		return nil
	case err != nil:
		return err
	case o == Failed:
		return fmt.Errorf("%s: append a group of %s versions %d to %d: the backend failed without saying why",
			f.name, streams[0].AggregateID, streams[0].Version, streams[len(streams)-1].Version)
	case i < 0 || i >= len(streams):
		return fmt.Errorf("%s: append a group of %s: the backend refused stream %d of %d", f.name, streams[0].AggregateID, i, len(streams))
	}
	return o.err(streams[i])
}

// checkGroup checks the shape of a group of valid streams: one aggregate
// (the effective tenant included), consecutive versions, distinct request
// IDs.
func checkGroup(ss []*factum.EventStream) error {
	first := ss[0]
	id, tenant := first.AggregateID, first.AggregateID.TenantOrDefault()
	for i, s := range ss[1:] {
		i++
		a := s.AggregateID
		if a.NamedAggregate != id.NamedAggregate || a.ID != id.ID || a.TenantOrDefault() != tenant {
			return factum.IllegalArgument(fmt.Sprintf("group stream %d: aggregate %s, want the group's %s", i, a, id))
		}
		if s.Version != first.Version+i {
			return factum.IllegalArgument(fmt.Sprintf("group stream %d: version %d, want %d (consecutive)", i, s.Version, first.Version+i))
		}
		// A group is short: comparing with each earlier stream costs less
		// than a set.
		for j, o := range ss[:i] {
			if o.RequestID == s.RequestID {
				return factum.IllegalArgument(fmt.Sprintf("group streams %d and %d: both have request %q", j, i, s.RequestID))
			}
		}
	}
	if last := first.Version + len(ss) - 1; last > MaxVersion {
		return factum.IllegalArgument(fmt.Sprintf("group versions %d to %d: beyond the largest version %d", first.Version, last, MaxVersion))
	}
	return nil
}

var _ built.GroupAppender = (*Memory)(nil)
