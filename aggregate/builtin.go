package aggregate

import (
	"context"

	"github.com/factum-go/factum/codec"
)

// The built-in command and event names every aggregate handles.
const (
	DeleteCommand  = "delete_aggregate"
	RecoverCommand = "recover_aggregate"
	DeletedEvent   = "aggregate_deleted"
	RecoveredEvent = "aggregate_recovered"
)

// DeleteAggregate is the built-in command that marks an aggregate deleted.
// A deleted aggregate refuses every command but RecoverAggregate with
// IllegalAccessDeletedAggregate; its history stays in the store.
type DeleteAggregate struct{}

// MessageName names the command.
func (DeleteAggregate) MessageName() string { return DeleteCommand }

// RecoverAggregate is the built-in command that undoes DeleteAggregate. It
// is refused with IllegalState for an aggregate that is not deleted.
type RecoverAggregate struct{}

// MessageName names the command.
func (RecoverAggregate) MessageName() string { return RecoverCommand }

// AggregateDeleted records DeleteAggregate.
type AggregateDeleted struct{}

// MessageName names the event.
func (AggregateDeleted) MessageName() string { return DeletedEvent }

// AggregateRecovered records RecoverAggregate.
type AggregateRecovered struct{}

// MessageName names the event.
func (AggregateRecovered) MessageName() string { return RecoveredEvent }

// addBuiltins adds the delete and recover handlers. Their events change the
// envelope (State.Deleted), not S, so they have no sourcing functions; the
// deleted gate lives in Decide.
func (d *Definition[S]) addBuiltins() {
	if _, taken := d.handlers[DeleteCommand]; !taken {
		Handle(func(context.Context, S, DeleteAggregate) ([]any, error) {
			return []any{AggregateDeleted{}}, nil
		})(d)
	}
	if _, taken := d.handlers[RecoverCommand]; !taken {
		Handle(func(context.Context, S, RecoverAggregate) ([]any, error) {
			return []any{AggregateRecovered{}}, nil
		})(d)
	}
	d.events = append(d.events,
		func(r *codec.Registry) error { return codec.Register[AggregateDeleted](r) },
		func(r *codec.Registry) error { return codec.Register[AggregateRecovered](r) },
	)
}
