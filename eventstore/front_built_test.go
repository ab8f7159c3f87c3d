package eventstore_test

import (
	"context"
	"errors"
	"testing"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/eventstore"
	"github.com/factum-go/factum/internal/built"
)

// The front ends of every backend append the executor's built streams.
var _ built.Appender = (*eventstore.Memory)(nil)

func validStream(id factum.AggregateID, body string) *factum.EventStream {
	return &factum.EventStream{ID: factum.NewID(), AggregateID: id, Version: 1, CommandID: factum.NewID(), RequestID: factum.NewID(),
		Events: []factum.DomainEvent{{ID: factum.NewID(), Name: "opened", Sequence: 1, IsLast: true, Body: []byte(body)}}}
}

// Append keeps every check for streams it did not build: a stream with a
// body that is not JSON, or not UTF-8, is refused and never stored.
func TestAppendStillValidatesBodies(t *testing.T) {
	tests := []struct {
		name string
		body string
	}{
		{"not JSON", `{"a":`},
		{"empty", ``},
		{"not UTF-8", "\"\xff\""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := eventstore.NewMemory()
			id := factum.NamedAggregate{Context: "shop", Aggregate: "cart"}.WithID("c-1")
			if err := f.Append(context.Background(), validStream(id, tt.body)); !errors.Is(err, factum.ErrIllegalArgument) {
				t.Fatalf("Append of a body %q: %v, want IllegalArgument", tt.body, err)
			}
			if page, err := f.ReadLog(context.Background(), factum.Position{}, 10); err != nil || len(page) != 0 {
				t.Fatalf("the refused stream reached the log: %v, %v", page, err)
			}
		})
	}
}

// AppendBuilt stores a built stream as Append does, and still refuses what
// can be wrong with one: identities from the command, its shape, another
// bounded context, no stream at all, an ended context.
func TestAppendBuilt(t *testing.T) {
	id := factum.NamedAggregate{Context: "shop", Aggregate: "cart"}.WithID("c-1")
	ended, cancel := context.WithCancel(context.Background())
	cancel()
	tests := []struct {
		name    string
		ctx     context.Context
		stream  func() *factum.EventStream
		context string
		want    error
	}{
		{"valid", context.Background(), func() *factum.EventStream { return validStream(id, `{}`) }, "", nil},
		{"no stream", context.Background(), func() *factum.EventStream { return nil }, "", factum.ErrIllegalArgument},
		{"bad aggregate", context.Background(), func() *factum.EventStream {
			return validStream(factum.NamedAggregate{Context: "shop", Aggregate: "cart"}.WithID(""), `{}`)
		}, "", factum.ErrIllegalArgument},
		{"bad command id", context.Background(), func() *factum.EventStream {
			s := validStream(id, `{}`)
			s.CommandID = ""
			return s
		}, "", factum.ErrIllegalArgument},
		{"bad request id", context.Background(), func() *factum.EventStream {
			s := validStream(id, `{}`)
			s.RequestID = "a b\x00"
			return s
		}, "", factum.ErrIllegalArgument},
		{"version 0", context.Background(), func() *factum.EventStream {
			s := validStream(id, `{}`)
			s.Version = 0
			return s
		}, "", factum.ErrIllegalArgument},
		{"no events", context.Background(), func() *factum.EventStream {
			s := validStream(id, `{}`)
			s.Events = nil
			return s
		}, "", factum.ErrIllegalArgument},
		{"other context", context.Background(), func() *factum.EventStream { return validStream(id, `{}`) }, "billing", factum.ErrIllegalArgument},
		{"ended context", ended, func() *factum.EventStream { return validStream(id, `{}`) }, "", context.Canceled},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, err := eventstore.New(eventstore.NewMemory().Backend(), eventstore.Config{Context: tt.context})
			if err != nil {
				t.Fatal(err)
			}
			s := tt.stream()
			var b built.Stream
			if s != nil {
				b = built.Mark(s)
			}
			err = f.AppendBuilt(tt.ctx, b)
			page, rerr := f.ReadLog(context.Background(), factum.Position{}, 10)
			if rerr != nil {
				t.Fatal(rerr)
			}
			if tt.want == nil {
				if err != nil || len(page) != 1 || page[0].ID != s.ID || s.Position.IsZero() {
					t.Fatalf("AppendBuilt: %v; log %v", err, page)
				}
				if lerr := f.AppendBuilt(context.Background(), b); !errors.Is(lerr, factum.ErrDuplicateRequestID) {
					t.Fatalf("the same stream again: %v, want DuplicateRequestId", lerr)
				}
				return
			}
			if !errors.Is(err, tt.want) || len(page) != 0 {
				t.Fatalf("AppendBuilt: %v, want %v; log %v", err, tt.want, page)
			}
		})
	}
}
