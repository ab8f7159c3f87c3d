package aggregate

import (
	"context"
	"maps"
	"time"

	"github.com/factum-go/factum"
)

// build encodes the events into the next stream. One clock reading serves
// the stream's create time and its IDs' timestamps, and the IDs share one
// allocation. The reading is taken last, once the events are encoded and
// the header made, so that the create time marks the start of the append
// (a store decorator timing the append may take it for its start). The
// stream's header is its own copy of the command's (the command's stays
// the sender's to change), or the one hw, when set, makes.
func (p *processor[S]) build(ctx context.Context, hw HeaderWriter, cmd *factum.Command, st *State[S], events []any) (*factum.EventStream, []string, error) {
	var s *factum.EventStream
	if len(events) == 1 {
		// The common single-event stream and its event in one allocation.
		b := new(singleEventStream)
		s = &b.stream
		s.Events = b.events[:]
	} else {
		s = &factum.EventStream{Events: make([]factum.DomainEvent, len(events))}
	}
	names := make([]string, len(events))
	for i, ev := range events {
		name, rev, body, err := p.codec.Encode(ev)
		if err != nil {
			return nil, nil, factum.Errorf(factum.CodeInternalServerError,
				"aggregate %s: command %s returned event %T, which is not registered (add a Source or Emits for it): %w", p.def.named, cmd.Name, ev, err)
		}
		names[i] = name
		s.Events[i] = factum.DomainEvent{
			Name:     name,
			Revision: rev,
			Sequence: i + 1,
			IsLast:   i == len(events)-1,
			Body:     body,
		}
	}
	var header map[string]string
	if hw != nil {
		header = hw.StreamHeader(ctx, cmd.Header)
	}
	if header == nil && cmd.Header != nil {
		header = maps.Clone(cmd.Header)
	}
	now := time.Now()
	var idBuf [8]string
	var ids []string
	if n := len(events) + 1; n <= len(idBuf) {
		ids = idBuf[:n]
	} else {
		ids = make([]string, n)
	}
	p.ids.FillAt(ids, now)
	for i := range s.Events {
		s.Events[i].ID = ids[i+1]
	}
	*s = factum.EventStream{
		ID:          ids[0],
		AggregateID: cmd.AggregateID,
		Version:     st.Version + 1,
		CommandID:   cmd.ID,
		RequestID:   cmd.RequestIDOrID(),
		OwnerID:     cmd.OwnerID,
		CreateTime:  now,
		Header:      header,
		Events:      s.Events,
	}
	s.AggregateID.Tenant = cmd.AggregateID.TenantOrDefault()
	return s, names, nil
}

// singleEventStream holds a stream with one event and that event, so that
// building it takes one allocation instead of two. (The stream is kept by
// in-memory stores: at 288 bytes it fills its size class exactly, which is
// why the event names for the signal are not in here too.)
type singleEventStream struct {
	stream factum.EventStream
	events [1]factum.DomainEvent
}
