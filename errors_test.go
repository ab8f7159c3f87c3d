package factum

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"testing"
)

func TestCodesMatchTheirSentinels(t *testing.T) {
	for _, c := range Codes {
		if c == CodeOk {
			continue
		}
		err := fmt.Errorf("wrapped: %w", NewError(c, "x"))
		if !errors.Is(err, c.Err()) {
			t.Errorf("%s does not match its sentinel", c)
		}
		for _, other := range Codes {
			if other != c && other != CodeOk && errors.Is(err, other.Err()) {
				t.Errorf("%s matches the sentinel of %s", c, other)
			}
		}
		if CodeOf(err) != c {
			t.Errorf("CodeOf = %s, want %s", CodeOf(err), c)
		}
		if !c.Valid() {
			t.Errorf("%s not valid", c)
		}
	}
	if Code("Nope").Valid() {
		t.Error("unknown code valid")
	}
}

func TestCodeOf(t *testing.T) {
	tests := []struct {
		err  error
		want Code
	}{
		{nil, CodeOk},
		{ErrNotFound, CodeNotFound},
		{fmt.Errorf("x: %w", context.DeadlineExceeded), CodeRequestTimeout},
		{context.Canceled, CodeInternalServerError},
		{errors.New("boom"), CodeInternalServerError},
		{Errorf(CodeIllegalState, "bad %s: %w", "thing", errors.New("cause")), CodeIllegalState},
	}
	for _, tt := range tests {
		if got := CodeOf(tt.err); got != tt.want {
			t.Errorf("CodeOf(%v) = %s, want %s", tt.err, got, tt.want)
		}
	}
}

func TestErrorDetails(t *testing.T) {
	cause := errors.New("disk full")
	e := Errorf(CodeInternalServerError, "append: %w", cause)
	if !errors.Is(e, cause) {
		t.Fatal("Errorf lost the %w cause")
	}
	id := NamedAggregate{Context: "shop", Aggregate: "cart"}.WithID("c-1")
	d := NewError(CodeEventVersionConflict, "conflict").With(id, 3, "cmd-1", "req-1")
	if !d.Retryable || d.Version != 3 || d.Aggregate != id || d.CommandID != "cmd-1" || d.RequestID != "req-1" {
		t.Fatalf("With: %+v", d)
	}
	if IsRetryable(IllegalState("no")) || !IsRetryable(d) || IsRetryable(nil) {
		t.Fatal("IsRetryable")
	}
	b, err := json.Marshal(d)
	if err != nil {
		t.Fatal(err)
	}
	var back Error
	if err := json.Unmarshal(b, &back); err != nil || back.Code != d.Code || back.Version != 3 || back.Aggregate.ID != "c-1" {
		t.Fatalf("JSON round trip: %s -> %+v, %v", b, back, err)
	}
	if AsError(nil) != nil || AsError(errors.New("x")).Code != CodeInternalServerError || AsError(d) != d {
		t.Fatal("AsError")
	}
	want := "factum: EventVersionConflict: conflict [aggregate shop.cart/c-1@default version 3] [request req-1] [command cmd-1]"
	if d.Error() != want {
		t.Fatalf("Error() = %q\nwant      %q", d.Error(), want)
	}
}

func TestMessageOf(t *testing.T) {
	tests := []struct {
		err  error
		want string
	}{
		{nil, ""},
		{errors.New("plain"), "plain"},
		{IllegalState("cart is empty").With(NamedAggregate{Context: "c", Aggregate: "a"}.WithID("x"), 2, "c1", "r1"), "cart is empty"},
		{&Error{Code: CodeInternalServerError, Err: errors.New("disk")}, "disk"},
		{&Error{Code: CodeInternalServerError, Message: "append", Err: errors.New("disk")}, "append: disk"},
		{&Error{Code: CodeNotFound}, "NotFound"},
	}
	for _, tt := range tests {
		if got := MessageOf(tt.err); got != tt.want {
			t.Errorf("MessageOf(%v) = %q, want %q", tt.err, got, tt.want)
		}
	}
}
