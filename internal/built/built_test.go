package built_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/eventstore"
	"github.com/factum-go/factum/eventstore/eventstoretest"
	"github.com/factum-go/factum/internal/built"
	"github.com/factum-go/factum/sqlite"
)

// stream is a stream as the executor builds it for one command.
func stream(b testing.TB) *factum.EventStream {
	b.Helper()
	body, err := json.Marshal(struct {
		SKU   string `json:"sku"`
		Qty   int    `json:"qty"`
		Price int    `json:"price"`
	}{"sku-12345", 3, 1999})
	if err != nil {
		b.Fatal(err)
	}
	return &factum.EventStream{ID: factum.NewID(), Version: 7, CommandID: factum.NewID(), RequestID: factum.NewID(),
		AggregateID: factum.NamedAggregate{Context: "shop", Aggregate: "cart"}.WithID("cart-42"),
		Events:      []factum.DomainEvent{{ID: factum.NewID(), Name: "item_added", Sequence: 1, IsLast: true, Body: body}}}
}

// A built stream passes the stream's own checks too: Validate only skips
// checks, it accepts nothing Validate refuses for the same reasons.
func TestBuiltStreamIsValid(t *testing.T) {
	s := stream(t)
	if err := s.Validate(); err != nil {
		t.Fatal(err)
	}
	if err := built.Mark(s).Validate(); err != nil {
		t.Fatal(err)
	}
	if err := (built.Stream{}).Validate(); err == nil {
		t.Fatal("the zero Stream passes")
	}
}

// BenchmarkValidate compares the checks Append makes on a one-event stream
// with those AppendBuilt makes on the same stream.
func BenchmarkValidate(b *testing.B) {
	s := stream(b)
	b.Run("Append", func(b *testing.B) {
		for b.Loop() {
			if err := s.Validate(); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("AppendBuilt", func(b *testing.B) {
		m := built.Mark(s)
		for b.Loop() {
			if err := m.Validate(); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// wrapper is a user's store embedding one of the module's, as a wrapper
// overriding Append does: the embedded AppendBuilt is promoted into it.
type wrapper struct{ *eventstore.Memory }

// Of trusts the module's stores, which append built streams by their own
// methods, and not a type the methods were promoted into; GroupOf, those
// of them that serve groups.
func TestOf(t *testing.T) {
	ctx := context.Background()
	db, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "factum.db"), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	lite, err := sqlite.NewEventStore(ctx, db, "shop", sqlite.EventStoreOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = lite.Close() })
	front, err := eventstore.New(eventstore.NewMemory().Backend(), eventstore.Config{})
	if err != nil {
		t.Fatal(err)
	}
	plain, err := eventstore.New(eventstoretest.Plain(eventstore.NewMemory().Backend()), eventstore.Config{})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name      string
		store     any
		of, group bool
	}{
		{"memory", eventstore.NewMemory(), true, true},
		{"front end", front, true, true},
		{"front end without a group append", plain, true, false},
		{"sqlite", lite, true, true},
		{"wrapper", &wrapper{Memory: eventstore.NewMemory()}, false, false},
		{"value wrapper", wrapper{Memory: eventstore.NewMemory()}, false, false},
		{"other", struct{}{}, false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := built.Of(tt.store) != nil; got != tt.of {
				t.Fatalf("Of: %v, want %v", got, tt.of)
			}
			if got := built.GroupOf(tt.store) != nil; got != tt.group {
				t.Fatalf("GroupOf: %v, want %v", got, tt.group)
			}
		})
	}
}
