package aggregate

import (
	"context"
	"fmt"
	"runtime/debug"
	"time"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/codec"
)

// State is an aggregate's state with its envelope: identity, version,
// owner and deletion mark. Version 0 means the aggregate does not exist.
type State[S any] struct {
	// ID is the aggregate; its tenant is the one it was created in.
	ID factum.AggregateID
	// Version is the version of the last stream applied (0: none).
	Version int
	// OwnerID is the owner recorded by the creating stream, if any.
	OwnerID string
	// Deleted marks an aggregate deleted by DeleteAggregate.
	Deleted bool
	// EventTime is the creation time of the last stream applied.
	EventTime time.Time
	// Value is the domain state.
	Value S
}

// NewStateOf returns the envelope of a new aggregate id of this type, with
// the initial state.
func (d *Definition[S]) newEnvelope(id factum.AggregateID) State[S] {
	return State[S]{ID: id, Value: d.NewState()}
}

// Decide runs the pre-gates and the command's handler against st and
// returns the events to append. It changes nothing. The pre-gates run in
// this order, each with its code:
//
//  0. an aggregate of another tenant than the command's: NotFound, as for
//     a missing aggregate, or DuplicateAggregateId ("aggregate ID is
//     taken") for a create command; the error carries only
//     the command's own identities, never the aggregate's version;
//  1. an expected version other than st.Version: CommandExpectVersionConflict;
//  2. a missing aggregate for a command that neither creates nor allows
//     creating it: NotFound; a create command for an existing aggregate:
//     DuplicateAggregateId;
//  3. another owner: IllegalAccessOwnerAggregate;
//  4. a deleted aggregate and a command other than RecoverAggregate:
//     IllegalAccessDeletedAggregate (and RecoverAggregate of an aggregate
//     that is not deleted: IllegalState);
//  5. a command the aggregate does not handle: IllegalArgument.
//
// A handler's panic is recovered into an InternalServerError; a handler that
// returns no events and no error is an InternalServerError too (a stream
// needs at least one event; reject with an error instead).
func (d *Definition[S]) Decide(ctx context.Context, st *State[S], cmd *factum.Command) (events []any, err error) {
	events, _, err = d.decide(ctx, st, cmd)
	return events, err
}

// decide is Decide returning the effects the handler bound too.
func (d *Definition[S]) decide(ctx context.Context, st *State[S], cmd *factum.Command) (events []any, effs []Effect, err error) {
	if err := d.gate(st, cmd); err != nil {
		return nil, nil, err
	}
	h, ok := d.handlers[cmd.Name]
	if !ok {
		return nil, nil, d.refuse(factum.CodeIllegalArgument, fmt.Sprintf("aggregate %s does not handle command %q", d.named, cmd.Name), st, cmd)
	}
	defer func() {
		if p := recover(); p != nil {
			events, effs = nil, nil
			e := d.refuse(factum.CodeInternalServerError, fmt.Sprintf("handler of %s panicked: %v", cmd.Name, p), st, cmd)
			e.Err = fmt.Errorf("panic: %v\n%s", p, debug.Stack())
			err = e
		}
	}()
	dc := handlerContext(ctx, cmd)
	events, err = h.decide(dc, st.Value, cmd.Body)
	if err != nil {
		fe := factum.AsError(err)
		if fe.Aggregate.ID == "" || fe.CommandID == "" {
			fe = fe.With(cmd.AggregateID, st.Version, cmd.ID, cmd.RequestIDOrID())
		}
		return nil, nil, fe
	}
	if len(events) == 0 {
		return nil, nil, d.refuse(factum.CodeInternalServerError, fmt.Sprintf("handler of %s returned neither events nor an error", cmd.Name), st, cmd)
	}
	for i, e := range events {
		if e == nil {
			return nil, nil, d.refuse(factum.CodeInternalServerError, fmt.Sprintf("handler of %s returned a nil event at %d", cmd.Name, i), st, cmd)
		}
	}
	return events, dc.effects, nil
}

func (d *Definition[S]) gate(st *State[S], cmd *factum.Command) error {
	if st.Version > 0 && st.ID.TenantOrDefault() != cmd.AggregateID.TenantOrDefault() {
		return otherTenant(cmd)
	}
	if cmd.ExpectedVersion > 0 && cmd.ExpectedVersion != st.Version {
		return d.refuse(factum.CodeCommandExpectVersionConflict,
			fmt.Sprintf("command expects version %d, aggregate is at %d", cmd.ExpectedVersion, st.Version), st, cmd)
	}
	if st.Version == 0 {
		if !cmd.IsCreate && !cmd.AllowCreate {
			return d.refuse(factum.CodeNotFound, "aggregate not found", st, cmd)
		}
		return nil
	}
	if cmd.IsCreate {
		return d.refuse(factum.CodeDuplicateAggregateID, "aggregate already exists", st, cmd)
	}
	if st.OwnerID != "" && cmd.OwnerID != "" && st.OwnerID != cmd.OwnerID {
		return d.refuse(factum.CodeIllegalAccessOwnerAggregate, "aggregate belongs to another owner", st, cmd)
	}
	if st.Deleted && cmd.Name != RecoverCommand {
		return d.refuse(factum.CodeIllegalAccessDeletedAggregate, "aggregate is deleted; only recover_aggregate is allowed", st, cmd)
	}
	if !st.Deleted && cmd.Name == RecoverCommand {
		return d.refuse(factum.CodeIllegalState, "aggregate is not deleted", st, cmd)
	}
	return nil
}

// otherTenant is the refusal of a command naming another tenant than the
// aggregate's. It comes before every other gate and carries only the
// command's own identities: to another tenant an aggregate is missing (a
// create command is told the ID is taken, as a create with an ID taken in
// any tenant must be; IDs are unique across tenants), so the answer says nothing of the
// aggregate's tenant, version, state or requests.
func otherTenant(cmd *factum.Command) *factum.Error {
	if cmd.IsCreate {
		return factum.NewError(factum.CodeDuplicateAggregateID, "aggregate ID is taken").
			With(cmd.AggregateID, 0, cmd.ID, cmd.RequestIDOrID())
	}
	return factum.NewError(factum.CodeNotFound, "aggregate not found").
		With(cmd.AggregateID, 0, cmd.ID, cmd.RequestIDOrID())
}

// loadedOtherTenant is the error of a load that finds id's aggregate in
// another tenant than id's: a TenantMismatch, which checkout answers as
// the gate answers another tenant (OtherTenant).
func loadedOtherTenant(id factum.AggregateID) error {
	return factum.NewError(factum.CodeTenantMismatch, "aggregate belongs to another tenant").With(id, 0, "", "")
}

// OtherTenant returns the error a command gets for an aggregate of another
// tenant than its own; see Decide.
func OtherTenant(cmd *factum.Command) error { return otherTenant(cmd) }

func (d *Definition[S]) refuse(code factum.Code, msg string, st *State[S], cmd *factum.Command) *factum.Error {
	return factum.NewError(code, msg).With(cmd.AggregateID, st.Version, cmd.ID, cmd.RequestIDOrID())
}

// Apply applies the events of one stream, typed as the handler returned them
// and named as encoded, to st, and sets st.Version to version. The built-in
// delete and recover events set st.Deleted. Events without a sourcing
// function change nothing but the version.
func (d *Definition[S]) Apply(st *State[S], version int, names []string, events []any) error {
	for i, e := range events {
		if err := d.applyOne(st, names[i], e); err != nil {
			return err
		}
	}
	st.Version = version
	return nil
}

func (d *Definition[S]) applyOne(st *State[S], name string, e any) error {
	switch name {
	case DeletedEvent:
		st.Deleted = true
		return nil
	case RecoveredEvent:
		st.Deleted = false
		return nil
	}
	src, ok := d.sourcers[name]
	if !ok {
		return nil
	}
	if !src.apply(&st.Value, e) {
		return factum.Errorf(factum.CodeInternalServerError,
			"aggregate %s: event %s decoded as %T, its sourcing function takes %v", d.named, name, e, src.typ)
	}
	return nil
}

// Source applies a stored stream to st: it checks that the stream is the
// next version, decodes each event with reg (upcasting old revisions) and
// applies it. A version out of order is SourcingVersionConflict; an event
// name reg does not know is an error naming it.
func (d *Definition[S]) Source(reg *codec.Registry, st *State[S], s *factum.EventStream) error {
	if s.Version != st.Version+1 {
		return factum.NewError(factum.CodeSourcingVersionConflict,
			fmt.Sprintf("stream version %d does not follow state version %d", s.Version, st.Version)).
			With(s.AggregateID, s.Version, s.CommandID, s.RequestID)
	}
	for i := range s.Events {
		ev := &s.Events[i]
		if _, sourced := d.sourcers[ev.Name]; !sourced && ev.Name != DeletedEvent && ev.Name != RecoveredEvent {
			continue // no state change: skip decoding
		}
		v, err := reg.Decode(ev.Name, ev.Revision, ev.Body)
		if err != nil {
			return fmt.Errorf("aggregate %s version %d event %s: %w", d.named, s.Version, ev.Name, err)
		}
		if err := d.applyOne(st, ev.Name, v); err != nil {
			return err
		}
	}
	if st.Version == 0 {
		st.ID = s.AggregateID
		st.ID.Tenant = s.AggregateID.TenantOrDefault()
		st.OwnerID = s.OwnerID
	}
	st.Version = s.Version
	st.EventTime = s.CreateTime
	return nil
}
