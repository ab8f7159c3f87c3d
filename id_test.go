package factum

import (
	"errors"
	"strings"
	"testing"
)

func TestValidateName(t *testing.T) {
	tests := []struct {
		name string
		ok   bool
	}{
		{"cart", true},
		{"order-service.v2_x", true},
		{"Cart", true},
		{"", false},
		{"1cart", false},
		{"_cart", false},
		{"has space", false},
		{"slash/name", false},
		{"ünïcode", false},
		{strings.Repeat("a", MaxNameLen), true},
		{strings.Repeat("a", MaxNameLen+1), false},
	}
	for _, tt := range tests {
		err := ValidateName("test", tt.name)
		if (err == nil) != tt.ok {
			t.Errorf("ValidateName(%q) = %v, want ok=%v", tt.name, err, tt.ok)
		}
		if err != nil && !errors.Is(err, ErrIllegalArgument) {
			t.Errorf("ValidateName(%q) error %v is not IllegalArgument", tt.name, err)
		}
	}
}

func TestValidateID(t *testing.T) {
	tests := []struct {
		id string
		ok bool
	}{
		{"cart-42", true},
		{"0193b5c2-7e0a-7c3d-9f1e-1a2b3c4d5e6f", true},
		{"a:b@c.d+e", true},
		{"", false},
		{"has space", false},
		{"a/b", false},
		{"a?b", false},
		{"a#b", false},
		{"a%20", false},
		{"tab\there", false},
		{"del\x7f", false},
		{strings.Repeat("x", MaxIDLen), true},
		{strings.Repeat("x", MaxIDLen+1), false},
	}
	for _, tt := range tests {
		err := ValidateID("id", tt.id)
		if (err == nil) != tt.ok {
			t.Errorf("ValidateID(%q) = %v, want ok=%v", tt.id, err, tt.ok)
		}
	}
}

func TestAggregateIDValidate(t *testing.T) {
	named := NamedAggregate{Context: "shop", Aggregate: "cart"}
	tests := []struct {
		name string
		id   AggregateID
		ok   bool
	}{
		{"valid", named.WithID("c-1"), true},
		{"empty tenant means default", AggregateID{NamedAggregate: named, ID: "c-1"}, true},
		{"empty id", named.WithID(""), false},
		{"bad context", NamedAggregate{Context: "", Aggregate: "cart"}.WithID("x"), false},
		{"bad tenant", named.WithID("c-1").WithTenant("a b"), false},
		{"long tenant", named.WithID("c-1").WithTenant(strings.Repeat("t", MaxTenantLen+1)), false},
	}
	for _, tt := range tests {
		if err := tt.id.Validate(); (err == nil) != tt.ok {
			t.Errorf("%s: Validate() = %v, want ok=%v", tt.name, err, tt.ok)
		}
	}
	if got := (AggregateID{NamedAggregate: named, ID: "c-1"}).String(); got != "shop.cart/c-1@default" {
		t.Errorf("String() = %q", got)
	}
}

func TestDeriveID(t *testing.T) {
	a, b := DeriveID("req-1"), DeriveID("req-1")
	if a != b {
		t.Fatalf("DeriveID is not deterministic: %s %s", a, b)
	}
	if DeriveID("req-1", "x") == DeriveID("req-1x") {
		t.Fatal("DeriveID parts are not separated")
	}
	if err := ValidateID("derived", a); err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for range 1000 {
		id := NewID()
		if seen[id] {
			t.Fatalf("NewID repeated %s", id)
		}
		seen[id] = true
	}
}

func TestCommandValidate(t *testing.T) {
	named := NamedAggregate{Context: "shop", Aggregate: "cart"}
	base := NewCommand(named.WithID("c-1"), struct{ A int }{1})
	base.Name = "add_item"
	tests := []struct {
		name string
		cmd  Command
		ok   bool
	}{
		{"valid", base, true},
		{"create without id", func() Command { c := base; c.IsCreate = true; c.AggregateID.ID = ""; return c }(), true},
		{"non-create without id", func() Command { c := base; c.AggregateID.ID = ""; return c }(), false},
		{"bad request id", base.WithRequestID("a b"), false},
		{"negative version", base.WithExpectedVersion(-1), false},
		{"empty name", func() Command { c := base; c.Name = ""; return c }(), false},
	}
	for _, tt := range tests {
		if err := tt.cmd.Validate(); (err == nil) != tt.ok {
			t.Errorf("%s: Validate() = %v, want ok=%v", tt.name, err, tt.ok)
		}
	}
	h := base.WithHeader("k", "v")
	if base.Header != nil || h.Header["k"] != "v" {
		t.Fatal("WithHeader changed the original or lost the value")
	}
	if base.RequestIDOrID() != base.ID || base.WithRequestID("r").RequestIDOrID() != "r" {
		t.Fatal("RequestIDOrID")
	}
}

func TestSnakeCase(t *testing.T) {
	tests := map[string]string{
		"CartItemAdded":   "cart_item_added",
		"HTTPRequestSent": "http_request_sent",
		"AddItem":         "add_item",
		"ID":              "id",
		"OrderV2Created":  "order_v2_created",
		"already_snake":   "already_snake",
		"":                "",
	}
	for in, want := range tests {
		if got := SnakeCase(in); got != want {
			t.Errorf("SnakeCase(%q) = %q, want %q", in, got, want)
		}
	}
}

func BenchmarkValidateID(b *testing.B) {
	id := NewID()
	for b.Loop() {
		if err := ValidateID("id", id); err != nil {
			b.Fatal(err)
		}
	}
}

// The table ValidateID reads agrees with the rule it documents for every
// byte.
func TestValidateIDEveryByte(t *testing.T) {
	for c := range 256 {
		want := c > ' ' && c < 0x7f && c != '/' && c != '?' && c != '#' && c != '%'
		if got := ValidateID("id", "a"+string(rune(c))[:1]+"b") == nil; c < 0x80 && got != want {
			t.Errorf("byte %#x: valid %v, want %v", c, got, want)
		}
		if got := ValidateID("id", string([]byte{'a', byte(c)})) == nil; got != want {
			t.Errorf("byte %#x: valid %v, want %v", c, got, want)
		}
	}
}

func BenchmarkNewID(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		_ = NewID()
	}
}
