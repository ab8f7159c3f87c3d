package preparetest

import (
	"errors"
	"testing"
	"time"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/prepare"
)

// wantNotHeld fails unless err is the key change's "old key not held".
func wantNotHeld(t *testing.T, what string, err error) {
	t.Helper()
	wantCode(t, what, err, factum.CodeIllegalState)
	if !errors.Is(err, prepare.ErrNotHeld) {
		t.Fatalf("%s: %v does not match prepare.ErrNotHeld", what, err)
	}
}

func testChangeKey(t *testing.T, e *env) {
	old := prepare.Forever(acct("u1"))
	e.mustPrepare("old-name", old)
	next := prepare.ExpiresAt(account{ID: "u1", Tags: map[string]int{"renamed": 1}}, e.now().Add(time.Hour))
	ok, err := e.key.ChangeKey(e.ctx, "old-name", old.Value, "new-name", next)
	wantBool(t, "ChangeKey", ok, err, true)
	e.wantAbsent("old-name")
	e.wantHeld("new-name", next)

	// Changing back, and the old key is free for others meanwhile.
	ok, err = e.key.ChangeKey(e.ctx, "new-name", next.Value, "old-name", old)
	wantBool(t, "ChangeKey back", ok, err, true)
	e.wantHeld("old-name", old)
	e.wantAbsent("new-name")
}

func testChangeKeyNewTaken(t *testing.T, e *env) {
	mine, theirs := prepare.Forever(acct("mine")), prepare.Forever(acct("theirs"))
	e.mustPrepare("from", mine)
	e.mustPrepare("to", theirs)
	ok, err := e.key.ChangeKey(e.ctx, "from", mine.Value, "to", mine)
	wantBool(t, "ChangeKey to a taken key", ok, err, false)
	e.wantHeld("from", mine)
	e.wantHeld("to", theirs)

	// A retried change that already happened finds the new key taken (by
	// its own value) and reports false; nothing changes.
	ok, err = e.key.ChangeKey(e.ctx, "to", theirs.Value, "third", theirs)
	wantBool(t, "ChangeKey", ok, err, true)
	ok, err = e.key.ChangeKey(e.ctx, "to", theirs.Value, "third", theirs)
	wantBool(t, "retried ChangeKey", ok, err, false)
	e.wantHeld("third", theirs)
	e.wantAbsent("to")
}

func testChangeKeyOldNotHeld(t *testing.T, e *env) {
	mine, theirs := prepare.Forever(acct("mine")), prepare.Forever(acct("theirs"))
	e.mustPrepare("from", theirs)

	_, err := e.key.ChangeKey(e.ctx, "from", mine.Value, "to", mine)
	wantNotHeld(t, "ChangeKey from a key held by another value", err)
	e.wantHeld("from", theirs)
	e.wantAbsent("to") // the new key is left (or made) free again

	_, err = e.key.ChangeKey(e.ctx, "missing", mine.Value, "to", mine)
	wantNotHeld(t, "ChangeKey from a missing key", err)
	e.wantAbsent("missing")
	e.wantAbsent("to")
}

func testChangeKeyBothFail(t *testing.T, e *env) {
	mine, theirs := prepare.Forever(acct("mine")), prepare.Forever(acct("theirs"))
	e.mustPrepare("to", theirs)
	// The new key is taken and the old one not held: the new key is looked
	// at first, as in the specification's prepare-then-release order.
	ok, err := e.key.ChangeKey(e.ctx, "missing", mine.Value, "to", mine)
	wantBool(t, "ChangeKey to a taken key from a missing one", ok, err, false)
	e.wantHeld("to", theirs)
	e.wantAbsent("missing")
}

func testChangeKeySameKey(t *testing.T, e *env) {
	v := prepare.Forever(acct("v"))
	e.mustPrepare("same", v)
	_, err := e.key.ChangeKey(e.ctx, "same", v.Value, "same", prepare.Forever(acct("w")))
	wantCode(t, "ChangeKey to the same key", err, factum.CodeIllegalArgument)
	e.wantHeld("same", v)
}
