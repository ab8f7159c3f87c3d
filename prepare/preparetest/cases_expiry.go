package preparetest

import (
	"context"
	"reflect"
	"testing"

	"github.com/factum-go/factum/prepare"
)

// purger is what a backend that can remove expired records offers.
type purger interface {
	Purge(ctx context.Context) (int64, error)
}

// testExpiry prepares short reservations, lets them lapse once, and checks
// every operation on the lapsed keys.
func testExpiry(t *testing.T, e *env) {
	short := e.expiresSoon(acct("short"))
	for _, k := range []string{"lapsing", "rb", "rbv", "rep", "chg-from", "chg-to", "purged"} {
		e.mustPrepare(k, short)
	}
	forever := prepare.Forever(acct("forever"))
	e.mustPrepare("forever", forever)
	e.mustPrepare("mover", forever)
	got, ok, err := e.key.Get(e.ctx, "lapsing")
	early, eerr := e.key.Prepare(e.ctx, "lapsing", prepare.Forever(acct("early")))
	e.requireLive(short.ExpiresAt)
	if err != nil || !ok || !reflect.DeepEqual(got, short) {
		t.Fatalf("Get before expiry = %+v, %v, %v; want %+v", got, ok, err, short)
	}
	wantBool(t, "Prepare before expiry", early, eerr, false)

	e.passExpiry(short.ExpiresAt)

	// Get hides the lapsed value; GetValue shows it with its expiry where
	// the backend keeps expired records.
	e.wantFree("lapsing")
	got, ok, err = e.key.GetValue(e.ctx, "lapsing")
	switch {
	case err != nil:
		t.Fatalf("GetValue after expiry: %v", err)
	case e.target.DropsExpired && ok:
		t.Fatalf("GetValue after expiry = %+v on a backend that drops expired records", got)
	case !e.target.DropsExpired && (!ok || got.Value.ID != "short" || got.ExpiresAt != short.ExpiresAt):
		t.Fatalf("GetValue after expiry = %+v, %v; want %+v (expired records stay until purged)", got, ok, short)
	}
	if ok && !got.ExpiredAt(e.now()) {
		t.Fatalf("GetValue after expiry = %+v, not expired at %v", got, e.now())
	}

	// Every operation treats the lapsed key as free.
	ok, err = e.key.Rollback(e.ctx, "rb")
	wantBool(t, "Rollback of an expired key", ok, err, false)
	ok, err = e.key.RollbackValue(e.ctx, "rbv", short.Value)
	wantBool(t, "RollbackValue of an expired key", ok, err, false)
	ok, err = e.key.Reprepare(e.ctx, "rep", short.Value, prepare.Forever(acct("revived")))
	wantBool(t, "Reprepare of an expired key", ok, err, false)
	e.wantFree("rep")
	_, err = e.key.ChangeKey(e.ctx, "chg-from", short.Value, "chg-new", forever)
	wantNotHeld(t, "ChangeKey from an expired key", err)
	e.wantAbsent("chg-new")
	ok, err = e.key.ChangeKey(e.ctx, "mover", forever.Value, "chg-to", forever)
	wantBool(t, "ChangeKey onto an expired key", ok, err, true)
	e.wantHeld("chg-to", forever)
	e.wantAbsent("mover")

	// An expired key can be prepared by another value.
	next := prepare.Forever(acct("next"))
	ok, err = e.key.Prepare(e.ctx, "lapsing", next)
	wantBool(t, "Prepare of an expired key", ok, err, true)
	e.wantHeld("lapsing", next)
	e.wantHeld("forever", forever)

	p, can := e.target.Backend.(purger)
	if !can {
		return
	}
	n, err := p.Purge(e.ctx)
	if err != nil {
		t.Fatalf("Purge: %v", err)
	}
	// Other cases share the backend, so more may have been purged.
	if n < 1 {
		t.Fatalf("Purge removed %d records, want at least the expired %q", n, "purged")
	}
	e.wantAbsent("purged")
	e.wantHeld("lapsing", next)
	e.wantHeld("forever", forever)
	e.wantHeld("chg-to", forever)
	if n, err := p.Purge(e.ctx); err != nil {
		t.Fatalf("second Purge: %v", err)
	} else if e.target.Clock != nil && n != 0 {
		// With a clock of its own nothing else can lapse in between.
		t.Fatalf("second Purge removed %d records, want 0", n)
	}
}
