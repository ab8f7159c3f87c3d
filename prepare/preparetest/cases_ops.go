package preparetest

import (
	"context"
	"errors"
	"math"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/prepare"
)

func testPrepareGetRollback(t *testing.T, e *env) {
	alice := prepare.ExpiresAt(acct("alice"), e.now().Add(time.Hour))
	ok, err := e.key.Prepare(e.ctx, "alice", alice)
	wantBool(t, "Prepare on a free key", ok, err, true)
	e.wantHeld("alice", alice)

	ok, err = e.key.Prepare(e.ctx, "alice", prepare.Forever(acct("mallory")))
	wantBool(t, "Prepare of a held key with another value", ok, err, false)
	ok, err = e.key.Prepare(e.ctx, "alice", alice)
	wantBool(t, "Prepare of a held key with the same value", ok, err, false)
	e.wantHeld("alice", alice)

	ok, err = e.key.Rollback(e.ctx, "alice")
	wantBool(t, "Rollback of a held key", ok, err, true)
	e.wantAbsent("alice")
	ok, err = e.key.Rollback(e.ctx, "alice")
	wantBool(t, "second Rollback", ok, err, false)

	// A released key is free for anyone.
	mallory := prepare.Forever(acct("mallory"))
	e.mustPrepare("alice", mallory)
	e.wantHeld("alice", mallory)
}

func testMissingKey(t *testing.T, e *env) {
	e.wantAbsent("nobody")
	ok, err := e.key.Rollback(e.ctx, "nobody")
	wantBool(t, "Rollback of a missing key", ok, err, false)
	ok, err = e.key.RollbackValue(e.ctx, "nobody", acct("x"))
	wantBool(t, "RollbackValue of a missing key", ok, err, false)
	ok, err = e.key.Reprepare(e.ctx, "nobody", acct("x"), prepare.Forever(acct("y")))
	wantBool(t, "Reprepare of a missing key", ok, err, false)
	// The reference's script created the key here.
	e.wantAbsent("nobody")
}

func testForever(t *testing.T, e *env) {
	v := prepare.Forever(acct("bob"))
	e.mustPrepare("bob", v)
	got, ok, err := e.key.GetValue(e.ctx, "bob")
	if err != nil || !ok || got.ExpiresAt != prepare.TTLForever || !got.IsForever() {
		t.Fatalf("GetValue = %+v, %v, %v; want expiry TTLForever", got, ok, err)
	}
	// Far-future finite expiries round-trip exactly too.
	far := prepare.PreparedValue[account]{Value: acct("far"), ExpiresAt: prepare.MaxExpiry}
	e.mustPrepare("far", far)
	e.wantHeld("far", far)
}

func testRollbackValue(t *testing.T, e *env) {
	v := prepare.Forever(account{ID: "carol", Tags: map[string]int{"a": 1, "b": 2, "c": 3}})
	e.mustPrepare("carol", v)

	ok, err := e.key.RollbackValue(e.ctx, "carol", account{ID: "carol", Tags: map[string]int{"a": 1}})
	wantBool(t, "RollbackValue with another value", ok, err, false)
	e.wantHeld("carol", v)

	// An equal value built in another order encodes equally and matches.
	equal := account{ID: "carol", Tags: map[string]int{}}
	equal.Tags["c"] = 3
	equal.Tags["b"] = 2
	equal.Tags["a"] = 1
	ok, err = e.key.RollbackValue(e.ctx, "carol", equal)
	wantBool(t, "RollbackValue with an equal value", ok, err, true)
	e.wantAbsent("carol")
	ok, err = e.key.RollbackValue(e.ctx, "carol", equal)
	wantBool(t, "second RollbackValue", ok, err, false)
}

func testReprepare(t *testing.T, e *env) {
	v1 := prepare.Forever(acct("v1"))
	e.mustPrepare("dave", v1)

	ok, err := e.key.Reprepare(e.ctx, "dave", acct("other"), prepare.Forever(acct("v2")))
	wantBool(t, "Reprepare with a wrong old value", ok, err, false)
	e.wantHeld("dave", v1)

	// From forever to a finite expiry: the expiry is replaced too.
	v2 := prepare.ExpiresAt(acct("v2"), e.now().Add(time.Hour))
	ok, err = e.key.Reprepare(e.ctx, "dave", acct("v1"), v2)
	wantBool(t, "Reprepare with the right old value", ok, err, true)
	e.wantHeld("dave", v2)

	ok, err = e.key.Reprepare(e.ctx, "dave", acct("v1"), prepare.Forever(acct("v3")))
	wantBool(t, "Reprepare with the replaced value", ok, err, false)
	e.wantHeld("dave", v2)

	// And back to forever; the same value may be re-prepared with a new
	// expiry (making a temporary reservation permanent).
	v2f := prepare.Forever(acct("v2"))
	ok, err = e.key.Reprepare(e.ctx, "dave", acct("v2"), v2f)
	wantBool(t, "Reprepare to forever", ok, err, true)
	e.wantHeld("dave", v2f)
}

func testNamesScopeKeys(t *testing.T, e *env) {
	other := newKey[account](t, e.target.Backend, uniqueName(t))
	a, b := prepare.Forever(acct("a")), prepare.Forever(acct("b"))
	e.mustPrepare("shared", a)
	ok, err := other.Prepare(e.ctx, "shared", b)
	wantBool(t, "Prepare of the same key under another name", ok, err, true)

	ok, err = other.Rollback(e.ctx, "shared")
	wantBool(t, "Rollback under the other name", ok, err, true)
	e.wantHeld("shared", a)
	got, held, err := other.Get(e.ctx, "shared")
	if err != nil || held {
		t.Fatalf("other name still holds %+v, %v", got, err)
	}
}

func testAwkwardKeys(t *testing.T, e *env) {
	keys := []string{
		"a", "A", "a ", " a", "a:b", "{a}", "}{", "{", "a}b{c", "x\ny", "ü名前🙂", "a'b\"c;--",
		"%s%d", `\`, "*", "?",
		strings.Repeat("k", prepare.MaxKeyLen),
	}
	for _, k := range keys {
		e.mustPrepare(k, prepare.Forever(acct(k)))
	}
	for _, k := range keys {
		e.wantHeld(k, prepare.Forever(acct(k)))
	}
	for _, k := range keys {
		ok, err := e.key.RollbackValue(e.ctx, k, acct(k))
		wantBool(t, "RollbackValue("+k+")", ok, err, true)
	}
	for _, k := range keys {
		e.wantAbsent(k)
	}
}

func testInvalidInput(t *testing.T, e *env) {
	ctx, k := e.ctx, e.key
	v := prepare.Forever(acct("v"))
	badKeys := map[string]string{
		"empty":        "",
		"too long":     strings.Repeat("k", prepare.MaxKeyLen+1),
		"invalid utf8": "a\xffb",
		"NUL":          "a\x00b",
	}
	for what, bad := range badKeys {
		ops := map[string]func() error{
			"Prepare":       func() error { _, err := k.Prepare(ctx, bad, v); return err },
			"Get":           func() error { _, _, err := k.Get(ctx, bad); return err },
			"GetValue":      func() error { _, _, err := k.GetValue(ctx, bad); return err },
			"Rollback":      func() error { _, err := k.Rollback(ctx, bad); return err },
			"RollbackValue": func() error { _, err := k.RollbackValue(ctx, bad, v.Value); return err },
			"Reprepare":     func() error { _, err := k.Reprepare(ctx, bad, v.Value, v); return err },
			"ChangeKey old": func() error { _, err := k.ChangeKey(ctx, bad, v.Value, "fine", v); return err },
			"ChangeKey new": func() error { _, err := k.ChangeKey(ctx, "fine", v.Value, bad, v); return err },
		}
		for op, fn := range ops {
			wantCode(t, op+" with "+what+" key", fn(), factum.CodeIllegalArgument)
		}
	}
	e.wantAbsent("fine")

	for _, exp := range []int64{0, -1, math.MinInt64, prepare.MaxExpiry + 1, prepare.TTLForever - 1} {
		bad := prepare.PreparedValue[account]{Value: acct("v"), ExpiresAt: exp}
		_, err := k.Prepare(ctx, "exp", bad)
		wantCode(t, "Prepare with expiry "+strconv.FormatInt(exp, 10), err, factum.CodeIllegalArgument)
		_, err = k.Reprepare(ctx, "exp", acct("v"), bad)
		wantCode(t, "Reprepare with expiry "+strconv.FormatInt(exp, 10), err, factum.CodeIllegalArgument)
		_, err = k.ChangeKey(ctx, "exp", acct("v"), "exp2", bad)
		wantCode(t, "ChangeKey with expiry "+strconv.FormatInt(exp, 10), err, factum.CodeIllegalArgument)
	}
	e.wantAbsent("exp")

	anyKey := newKey[any](t, e.target.Backend, uniqueName(t))
	for what, bad := range map[string]any{"NaN": math.NaN(), "channel": make(chan int), "func": func() {}} {
		_, err := anyKey.Prepare(ctx, "unencodable", prepare.Forever(bad))
		wantCode(t, "Prepare of a "+what, err, factum.CodeIllegalArgument)
		_, err = anyKey.RollbackValue(ctx, "unencodable", bad)
		wantCode(t, "RollbackValue of a "+what, err, factum.CodeIllegalArgument)
	}
	if _, ok, err := anyKey.GetValue(ctx, "unencodable"); ok || err != nil {
		t.Fatalf("an unencodable value left a record (%v, %v)", ok, err)
	}

	for _, name := range []string{"", "1abc", "a b", "a{b}", strings.Repeat("n", factum.MaxNameLen+1)} {
		_, err := prepare.NewKey[account](name, e.target.Backend)
		wantCode(t, "NewKey("+name+")", err, factum.CodeIllegalArgument)
	}
	_, err := prepare.NewKey[account]("fine", nil)
	wantCode(t, "NewKey with a nil backend", err, factum.CodeIllegalArgument)
}

func testDecodeMismatch(t *testing.T, e *env) {
	ints := newKey[int](t, e.target.Backend, e.key.Name())
	e.mustPrepare("typed", prepare.Forever(acct("x")))
	_, _, err := ints.Get(e.ctx, "typed")
	wantCode(t, "Get into the wrong type", err, factum.CodeIllegalState)
	_, _, err = ints.GetValue(e.ctx, "typed")
	wantCode(t, "GetValue into the wrong type", err, factum.CodeIllegalState)
}

func testCancelled(t *testing.T, e *env) {
	v := prepare.Forever(acct("v"))
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	expired, cancel2 := context.WithDeadline(context.Background(), time.Now().Add(-time.Second))
	defer cancel2()
	for _, c := range []struct {
		ctx  context.Context
		want error
	}{{cancelled, context.Canceled}, {expired, context.DeadlineExceeded}} {
		ctx, k := c.ctx, e.key
		ops := map[string]func() error{
			"Prepare":       func() error { _, err := k.Prepare(ctx, "held", v); return err },
			"Prepare free":  func() error { _, err := k.Prepare(ctx, "free", v); return err },
			"Get":           func() error { _, _, err := k.Get(ctx, "held"); return err },
			"GetValue":      func() error { _, _, err := k.GetValue(ctx, "held"); return err },
			"Rollback":      func() error { _, err := k.Rollback(ctx, "held"); return err },
			"RollbackValue": func() error { _, err := k.RollbackValue(ctx, "held", v.Value); return err },
			"Reprepare":     func() error { _, err := k.Reprepare(ctx, "held", v.Value, prepare.Forever(acct("w"))); return err },
			"ChangeKey":     func() error { _, err := k.ChangeKey(ctx, "held", v.Value, "free", v); return err },
		}
		e.mustPrepare("held", v)
		for op, fn := range ops {
			if err := fn(); !errors.Is(err, c.want) {
				t.Fatalf("%s with a done context: got %v, want %v", op, err, c.want)
			}
		}
		// Nothing was applied.
		e.wantHeld("held", v)
		e.wantAbsent("free")
		ok, err := e.key.Rollback(e.ctx, "held")
		wantBool(t, "Rollback", ok, err, true)
	}
}
