package codec_test

import (
	"errors"
	"testing"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/codec"
)

type OrderPlaced struct {
	ID string `json:"id"`
}

type Other struct{}

func TestRegistry(t *testing.T) {
	r := codec.NewRegistry()
	if err := codec.Register[OrderPlaced](r); err != nil {
		t.Fatal(err)
	}
	if err := codec.Register[OrderPlaced](r); err != nil {
		t.Fatalf("re-registering the same type: %v", err)
	}
	tests := []struct {
		name string
		err  error
	}{
		{"name taken by another type", codec.Register[Other](r, codec.Name("order_placed"))},
		{"type under a second name", codec.Register[OrderPlaced](r, codec.Name("placed"))},
		{"invalid name", codec.Register[Other](r, codec.Name("has space"))},
		{"negative revision", codec.Register[Other](r, codec.Revision(-1))},
	}
	for _, tt := range tests {
		if !errors.Is(tt.err, factum.ErrIllegalArgument) {
			t.Errorf("%s: err = %v, want IllegalArgument", tt.name, tt.err)
		}
	}
	if _, _, _, err := r.Encode(Other{}); err == nil {
		t.Fatal("encoding an unregistered type succeeded")
	}
	if _, err := r.Decode("order_placed", 3, []byte(`{}`)); !errors.Is(err, factum.ErrIllegalState) {
		t.Fatalf("decode of a future revision = %v, want IllegalState", err)
	}
	if _, err := r.Decode("order_placed", 0, []byte(`{"id":`)); !errors.Is(err, factum.ErrBadRequest) {
		t.Fatalf("decode of bad JSON = %v, want BadRequest", err)
	}
	var unknown *codec.UnknownTypeError
	if _, err := r.Decode("nope", 0, []byte(`{}`)); !errors.As(err, &unknown) || unknown.Name != "nope" {
		t.Fatalf("decode of an unknown name = %v", err)
	}
	if err := codec.Register[Other](r, codec.Revision(2)); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Decode("other", 0, []byte(`{}`)); !errors.Is(err, factum.ErrIllegalState) {
		t.Fatalf("decode with a missing upcaster = %v, want IllegalState", err)
	}
}
