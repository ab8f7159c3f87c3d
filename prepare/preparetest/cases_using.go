package preparetest

import (
	"context"
	"errors"
	"testing"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/prepare"
)

var errBusiness = errors.New("business rule refused the command")

func testUsingPrepare(t *testing.T, e *env) {
	v := prepare.Forever(acct("u1"))
	var saw []bool
	got, err := prepare.UsingPrepare(e.ctx, e.key, "erin", v, func(ctx context.Context, prepared bool) (string, error) {
		saw = append(saw, prepared)
		return "registered", nil
	})
	if err != nil || got != "registered" || len(saw) != 1 || !saw[0] {
		t.Fatalf("UsingPrepare = %q, %v, fn saw %v; want registered, nil, [true]", got, err, saw)
	}
	// Success commits nothing else: the reservation simply stands.
	e.wantHeld("erin", v)
}

func testUsingPrepareTaken(t *testing.T, e *env) {
	theirs := prepare.Forever(acct("theirs"))
	e.mustPrepare("frank", theirs)
	var saw []bool
	_, err := prepare.UsingPrepare(e.ctx, e.key, "frank", prepare.Forever(acct("mine")), func(ctx context.Context, prepared bool) (int, error) {
		saw = append(saw, prepared)
		if !prepared {
			return 0, factum.IllegalState("username is already reserved")
		}
		return 1, nil
	})
	wantCode(t, "UsingPrepare on a taken key", err, factum.CodeIllegalState)
	if len(saw) != 1 || saw[0] {
		t.Fatalf("fn saw %v, want [false]", saw)
	}
	// Not prepared by this call, so not released by it.
	e.wantHeld("frank", theirs)
}

func testUsingPrepareError(t *testing.T, e *env) {
	v := prepare.Forever(acct("u1"))
	got, err := prepare.UsingPrepare(e.ctx, e.key, "gina", v, func(ctx context.Context, prepared bool) (string, error) {
		if !prepared {
			t.Error("fn saw false on a free key")
		}
		return "partial", errBusiness
	})
	if !errors.Is(err, errBusiness) {
		t.Fatalf("UsingPrepare error = %v, want the function's error", err)
	}
	if got != "partial" {
		t.Fatalf("UsingPrepare result = %q, want the function's result", got)
	}
	e.wantFree("gina")
	e.mustPrepare("gina", prepare.Forever(acct("u2")))
}

func testUsingPreparePanic(t *testing.T, e *env) {
	type boom struct{ n int }
	func() {
		defer func() {
			r := recover()
			if b, ok := r.(boom); !ok || b.n != 42 {
				t.Fatalf("recovered %v, want the function's own panic value", r)
			}
		}()
		prepare.UsingPrepare(e.ctx, e.key, "hank", prepare.Forever(acct("u1")), func(ctx context.Context, prepared bool) (int, error) {
			panic(boom{42})
		})
		t.Fatal("UsingPrepare returned after the function panicked")
	}()
	e.wantFree("hank")
}

func testUsingPrepareCancelled(t *testing.T, e *env) {
	cause := errors.New("client went away")
	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	got, err := prepare.UsingPrepare(ctx, e.key, "ivan", prepare.Forever(acct("u1")), func(ctx context.Context, prepared bool) (int, error) {
		if !prepared {
			t.Error("fn saw false on a free key")
		}
		cancel(cause)
		return 7, nil // the function finished, but its caller is gone
	})
	if !errors.Is(err, context.Canceled) || !errors.Is(err, cause) || got != 0 {
		t.Fatalf("UsingPrepare = %v, %v; want 0 and an error matching context.Canceled and the cause", got, err)
	}
	// Released on a context that outlived the caller's.
	e.wantFree("ivan")

	// A function that notices the cancellation and returns its error.
	ctx2, cancel2 := context.WithCancel(context.Background())
	_, err = prepare.UsingPrepare(ctx2, e.key, "ivan", prepare.Forever(acct("u1")), func(ctx context.Context, prepared bool) (int, error) {
		cancel2()
		<-ctx.Done()
		return 0, ctx.Err()
	})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("UsingPrepare = %v; want context.Canceled", err)
	}
	e.wantFree("ivan")
}

func testUsingPrepareInvalidKey(t *testing.T, e *env) {
	called := false
	_, err := prepare.UsingPrepare(e.ctx, e.key, "", prepare.Forever(acct("u1")), func(ctx context.Context, prepared bool) (int, error) {
		called = true
		return 0, nil
	})
	wantCode(t, "UsingPrepare with an empty key", err, factum.CodeIllegalArgument)
	if called {
		t.Fatal("fn was called although the prepare failed")
	}
}

// testUsingPrepareAfterExpiry: the reservation lapses while fn runs and
// another value takes the key; fn then fails, and the release must not
// take the other value's reservation away.
func testUsingPrepareAfterExpiry(t *testing.T, e *env) {
	mine := e.expiresSoon(acct("mine"))
	theirs := prepare.Forever(acct("theirs"))
	_, err := prepare.UsingPrepare(e.ctx, e.key, "jane", mine, func(ctx context.Context, prepared bool) (int, error) {
		if !prepared {
			t.Error("fn saw false on a free key")
		}
		e.passExpiry(mine.ExpiresAt)
		ok, err := e.key.Prepare(ctx, "jane", theirs)
		if err != nil || !ok {
			t.Errorf("Prepare of the lapsed key = %v, %v; want true", ok, err)
		}
		return 0, errBusiness
	})
	if !errors.Is(err, errBusiness) {
		t.Fatalf("UsingPrepare = %v, want the function's error", err)
	}
	e.wantHeld("jane", theirs)
}
