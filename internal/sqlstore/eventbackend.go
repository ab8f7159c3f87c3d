package sqlstore

import (
	"context"
	"sync"

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
// own, as each database makes a group atomic its own way. It is given the
// group's streams and their rows, encoded, and is called only while the
// backend's groups are open.
type GroupAppends interface {
	AppendGroup(ctx context.Context, ss []*factum.EventStream, rows []EventRow) (eventstore.Outcome, int, error)
}

// EventBackend is the eventstore.Backend of a SQL store: the shared reads
// (with every fast path), the dialect's appends, group appends and its
// log. A backend's constructor puts the eventstore front end over it
// (NewFront).
type EventBackend struct {
	*EventReads
	EventLog
	Appends Appends
	Groups  GroupAppends
	// Closed is the error of a group append after CloseGroups.
	Closed error

	// groupMu is held by a group append while it writes, and by
	// CloseGroups to set groupsClosed, so that CloseGroups waits for the
	// groups in flight and refuses the later ones.
	groupMu      sync.RWMutex
	groupsClosed bool
}

// NewFront returns the eventstore front end over b, named after the
// dialect.
func (b *EventBackend) NewFront() (*eventstore.Front, error) {
	return eventstore.New(b, eventstore.Config{Context: b.context, Name: b.d.Name})
}

// Append implements eventstore.Backend.
func (b *EventBackend) Append(ctx context.Context, s *factum.EventStream) (eventstore.Outcome, error) {
	return b.Appends.Append(ctx, s)
}

// AppendGroup implements eventstore.GroupBackend: it encodes the group's
// rows (a stream the dialect cannot store fails at its index) and hands
// them to the dialect's group appends, unless CloseGroups was called.
func (b *EventBackend) AppendGroup(ctx context.Context, ss []*factum.EventStream) (eventstore.Outcome, int, error) {
	rows := make([]EventRow, len(ss))
	for i, es := range ss {
		row, err := EncodeStream(b.d, es)
		if err != nil {
			return eventstore.Failed, i, err
		}
		rows[i] = row
	}
	b.groupMu.RLock()
	defer b.groupMu.RUnlock()
	if b.groupsClosed {
		return eventstore.Failed, 0, b.Closed
	}
	return b.Groups.AppendGroup(ctx, ss, rows)
}

// CloseGroups waits for the group appends in flight and refuses the later
// ones with Closed.
func (b *EventBackend) CloseGroups() {
	b.groupMu.Lock()
	b.groupsClosed = true
	b.groupMu.Unlock()
}

var (
	_ eventstore.Backend      = (*EventBackend)(nil)
	_ eventstore.GroupBackend = (*EventBackend)(nil)
	_ eventstore.LogWaiter    = (*EventBackend)(nil)
)
