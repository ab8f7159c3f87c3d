package sqlstore

import (
	"context"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/eventstore"
)

// EventLog is the part of an event backend each dialect keeps its own: the
// global log, whose order and wake-ups each database provides its own
// way.
type EventLog interface {
	ReadLog(ctx context.Context, after factum.Position, limit int) ([]factum.EventStream, error)
	eventstore.LogWaiter
}

// Appends is what writes a backend's appends: an Appender over the
// dialect's writers.
type Appends interface {
	Append(ctx context.Context, s *factum.EventStream) (eventstore.Outcome, error)
}

// GroupAppends is what writes a backend's group appends: the dialect's
// own, as each database makes a group atomic its own way.
type GroupAppends interface {
	AppendGroup(ctx context.Context, ss []*factum.EventStream) (eventstore.Outcome, int, error)
}

// EventBackend is the eventstore.Backend of a SQL store: the shared reads
// (with every fast path), the dialect's appends, group appends and its
// log. A backend's constructor puts the eventstore front end over it.
type EventBackend struct {
	*EventReads
	EventLog
	Appends Appends
	Groups  GroupAppends
}

// Append implements eventstore.Backend.
func (b *EventBackend) Append(ctx context.Context, s *factum.EventStream) (eventstore.Outcome, error) {
	return b.Appends.Append(ctx, s)
}

// AppendGroup implements eventstore.GroupBackend.
func (b *EventBackend) AppendGroup(ctx context.Context, ss []*factum.EventStream) (eventstore.Outcome, int, error) {
	return b.Groups.AppendGroup(ctx, ss)
}

var (
	_ eventstore.Backend      = (*EventBackend)(nil)
	_ eventstore.GroupBackend = (*EventBackend)(nil)
	_ eventstore.LogWaiter    = (*EventBackend)(nil)
)
