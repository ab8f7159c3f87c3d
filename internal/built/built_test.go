package built_test

import (
	"encoding/json"
	"testing"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/internal/built"
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
