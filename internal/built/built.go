// Package built marks the event streams the aggregate executor built
// itself, so that the event store's front end can skip the checks that
// cannot fail for them.
//
// Of what factum.EventStream.Validate checks, the executor makes most true
// by construction: the stream and event IDs come from its UUIDv7
// generator, event names and revisions from a codec registry (which
// validates them at registration), bodies from json.Marshal (which only
// produces valid JSON, though not always valid UTF-8: it copies a
// RawMessage's or a Marshaler's bytes without checking them, so
// Stream.Validate checks UTF-8), and sequences and IsLast from the loop
// that numbers the events. Re-checking the rest costs a few per cent of a
// command's CPU, half of it json.Valid on bytes just encoded. The package
// is internal, so no stream from outside the module can be marked: every
// other caller's streams go through Append and the whole Validate.
package built

import (
	"context"
	"fmt"
	"unicode/utf8"

	"github.com/factum-go/factum"
)

// Stream is an event stream the aggregate executor built. The zero Stream
// holds none.
type Stream struct {
	s *factum.EventStream
}

// Mark vouches for s: its IDs, event names, revisions, sequences and
// bodies are valid by construction, as the package documentation lists.
// Only the aggregate executor calls it.
func Mark(s *factum.EventStream) Stream { return Stream{s: s} }

// Stream returns the stream, or nil for the zero Stream.
func (b Stream) Stream() *factum.EventStream { return b.s }

// Validate makes the checks of Validate that can fail for a built stream:
// the identities it copies from the command (which reaches the executor
// from callers), its shape, and its bodies' UTF-8. It returns IllegalArgument errors, as
// Validate does.
func (b Stream) Validate() error {
	s := b.s
	if s == nil {
		return factum.IllegalArgument("built: no stream")
	}
	if err := s.AggregateID.Validate(); err != nil {
		return err
	}
	if err := factum.ValidateID("command id", s.CommandID); err != nil {
		return err
	}
	if err := factum.ValidateID("request id", s.RequestID); err != nil {
		return err
	}
	if s.Version < 1 {
		return factum.IllegalArgument(fmt.Sprintf("stream version %d: versions start at 1", s.Version))
	}
	if len(s.Events) == 0 {
		return factum.IllegalArgument("stream has no events")
	}
	for i := range s.Events {
		if e := &s.Events[i]; !utf8.Valid(e.Body) {
			return factum.IllegalArgument(fmt.Sprintf("event %d (%s): body is not valid UTF-8 JSON", i, e.Name))
		}
	}
	return nil
}

// Appender is an event store that appends built streams. AppendBuilt is
// Append with Stream.Validate in place of the stream's Validate.
//
// Embedding promotes both methods into the embedding type, which may
// override Append (a user's wrapper adding its own checks): AppendBuilt
// would then skip the wrapper. Owner says whose methods they are, and Of
// uses them only for that store itself.
type Appender interface {
	AppendBuilt(ctx context.Context, s Stream) error
	// BuiltOwner returns OwnedBy(the store declaring the method).
	BuiltOwner() Owner
}

// Owner is the store an Appender's methods belong to.
type Owner struct{ store any }

// OwnedBy returns store as an Owner; store is a pointer.
func OwnedBy(store any) Owner { return Owner{store: store} }

// Of returns store as an Appender when it appends built streams by its
// own methods, not ones promoted into it from a store it embeds; nil
// otherwise.
func Of(store any) Appender {
	a, ok := store.(Appender)
	if !ok || a.BuiltOwner().store != store {
		return nil
	}
	return a
}
