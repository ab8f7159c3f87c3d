package idempotencytest

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/idempotency"
)

// testInvalidInput: empty or malformed key parts and fingerprints are
// refused by every method with a typed error, and nothing is stored.
func testInvalidInput(t *testing.T, newStore NewStore) {
	f := newFixture(t, newStore, longPeriod, longPeriod)
	good := f.key("valid")
	with := func(mutate func(*idempotency.Key)) idempotency.Key {
		k := good
		mutate(&k)
		return k
	}
	cases := []struct {
		name string
		k    idempotency.Key
		fp   string
		want error
	}{
		{"empty tenant", with(func(k *idempotency.Key) { k.Tenant = "" }), fp, idempotency.ErrKeyEmpty},
		{"empty operation", with(func(k *idempotency.Key) { k.Operation = "" }), fp, idempotency.ErrKeyEmpty},
		{"empty value", with(func(k *idempotency.Key) { k.Value = "" }), fp, idempotency.ErrKeyEmpty},
		{"zero key", idempotency.Key{}, fp, idempotency.ErrKeyEmpty},
		{"long tenant", with(func(k *idempotency.Key) { k.Tenant = strings.Repeat("t", idempotency.MaxTenantLen+1) }), fp, idempotency.ErrKeyInvalid},
		{"long operation", with(func(k *idempotency.Key) { k.Operation = strings.Repeat("o", idempotency.MaxOperationLen+1) }), fp, idempotency.ErrKeyInvalid},
		{"long value", with(func(k *idempotency.Key) { k.Value = strings.Repeat("v", idempotency.MaxValueLen+1) }), fp, idempotency.ErrKeyInvalid},
		{"NUL in value", with(func(k *idempotency.Key) { k.Value = "a\x00b" }), fp, idempotency.ErrKeyInvalid},
		{"newline in tenant", with(func(k *idempotency.Key) { k.Tenant = "a\nb" }), fp, idempotency.ErrKeyInvalid},
		{"invalid UTF-8", with(func(k *idempotency.Key) { k.Value = "a\xffb" }), fp, idempotency.ErrKeyInvalid},
		{"empty fingerprint", good, "", idempotency.ErrFingerprintInvalid},
		{"long fingerprint", good, strings.Repeat("f", idempotency.MaxFingerprintLen+1), idempotency.ErrFingerprintInvalid},
		{"NUL in fingerprint", good, "f\x00", idempotency.ErrFingerprintInvalid},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			check := func(what string, err error) {
				t.Helper()
				wantErr(t, what, err, c.want)
				if !errors.Is(err, factum.ErrIllegalArgument) {
					t.Fatalf("%s: %v is not a factum IllegalArgument error", what, err)
				}
			}
			rec, created, err := f.s.Begin(f.ctx, c.k, c.fp)
			check("Begin", err)
			if created || rec.Attempt != 0 {
				t.Fatalf("refused Begin returned created=%v %+v", created, rec)
			}
			check("Complete", f.s.Complete(f.ctx, c.k, c.fp, 1, nil))
			check("Fail", f.s.Fail(f.ctx, c.k, c.fp, 1, true))
			_, err = f.s.Renew(f.ctx, c.k, c.fp, 1)
			check("Renew", err)
			if c.want != idempotency.ErrFingerprintInvalid {
				_, _, err = f.s.Get(f.ctx, c.k)
				check("Get", err)
			}
		})
	}
	if _, found := f.get(good); found {
		t.Fatal("a refused call stored a record")
	}
	// The limits are inclusive, in bytes, and multi-byte text is welcome.
	edge := idempotency.Key{
		Tenant:    strings.Repeat("é", idempotency.MaxTenantLen/2),
		Operation: strings.Repeat("o", idempotency.MaxOperationLen),
		Value:     f.scope + strings.Repeat("v", idempotency.MaxValueLen-len(f.scope)),
	}
	longFP := strings.Repeat("✓", idempotency.MaxFingerprintLen/3)
	own := f.begin(edge, longFP)
	f.complete(edge, longFP, own.Attempt, []byte("edge"))
	if rec := f.replay(edge, longFP, idempotency.StateDone); string(rec.Response) != "edge" {
		t.Fatalf("replay at the limits = %q", rec.Response)
	}
}

// testVanished: finishing after the record is gone (the lease ended and
// nobody took over, or the key never existed) is ErrLeaseExpired.
func testVanished(t *testing.T, newStore NewStore) {
	f := newFixture(t, newStore, shortPeriod, longPeriod)
	never := f.key("never-begun")
	wantErr(t, "Complete of a key never begun", f.s.Complete(f.ctx, never, fp, 1, nil), idempotency.ErrLeaseExpired)

	k := f.key("vanished")
	own := f.begin(k, fp)
	time.Sleep(settle)
	wantErr(t, "Complete after the lease", f.s.Complete(f.ctx, k, fp, own.Attempt, []byte("late")), idempotency.ErrLeaseExpired)
	wantErr(t, "Fail after the lease", f.s.Fail(f.ctx, k, fp, own.Attempt, false), idempotency.ErrLeaseExpired)
	_, err := f.s.Renew(f.ctx, k, fp, own.Attempt)
	wantErr(t, "Renew after the lease", err, idempotency.ErrLeaseExpired)
	if rec, found := f.get(k); found {
		t.Fatalf("late calls resurrected the record: %+v", rec)
	}
	if next := f.begin(k, fp); next.Attempt <= own.Attempt {
		t.Fatalf("attempt after expiry %d not above %d", next.Attempt, own.Attempt)
	}
}

// testFinishedStale: only the owning attempt of an in-progress key may
// finish it, and only once.
func testFinishedStale(t *testing.T, newStore NewStore) {
	f := newFixture(t, newStore, longPeriod, longPeriod)
	k := f.key("finished")
	own := f.begin(k, fp)
	for _, a := range []uint64{0, own.Attempt + 1, own.Attempt - 1} {
		wantErr(t, "Complete by a foreign attempt", f.s.Complete(f.ctx, k, fp, a, nil), idempotency.ErrStaleAttempt)
		wantErr(t, "Fail by a foreign attempt", f.s.Fail(f.ctx, k, fp, a, true), idempotency.ErrStaleAttempt)
		_, err := f.s.Renew(f.ctx, k, fp, a)
		wantErr(t, "Renew by a foreign attempt", err, idempotency.ErrStaleAttempt)
	}
	f.complete(k, fp, own.Attempt, []byte("once"))
	wantErr(t, "second Complete", f.s.Complete(f.ctx, k, fp, own.Attempt, []byte("twice")), idempotency.ErrStaleAttempt)
	wantErr(t, "Fail after Complete", f.s.Fail(f.ctx, k, fp, own.Attempt, true), idempotency.ErrStaleAttempt)
	_, err := f.s.Renew(f.ctx, k, fp, own.Attempt)
	wantErr(t, "Renew after Complete", err, idempotency.ErrStaleAttempt)
	if rec := f.replay(k, fp, idempotency.StateDone); string(rec.Response) != "once" {
		t.Fatalf("response = %q after refused calls, want %q", rec.Response, "once")
	}
}

// testRenew: renewing keeps the key owned past the original lease.
func testRenew(t *testing.T, newStore NewStore) {
	f := newFixture(t, newStore, shortPeriod, longPeriod)
	k := f.key("renew")
	own := f.begin(k, fp)
	deadline := own.ExpiresAt
	for range 3 {
		time.Sleep(shortPeriod / 2)
		before := time.Now()
		rec, err := f.s.Renew(f.ctx, k, fp, own.Attempt)
		if err != nil {
			t.Fatalf("Renew: %v", err)
		}
		if rec.State != idempotency.StateInProgress || rec.Attempt != own.Attempt || !rec.ExpiresAt.After(deadline) {
			t.Fatalf("renewed record %+v; want in progress, attempt %d, expiry after %v", rec, own.Attempt, deadline)
		}
		within(t, "renewed ExpiresAt", rec.ExpiresAt, before, time.Now(), shortPeriod)
		deadline = rec.ExpiresAt
	}
	// 1.5 leases have passed since Begin: without the renewals the key
	// would be free.
	_, _, err := f.s.Begin(f.ctx, k, fp)
	wantErr(t, "Begin on a renewed key", err, idempotency.ErrInProgress)
	f.complete(k, fp, own.Attempt, []byte("renewed"))
}

// testScoped: the tenant and the operation scope the client's key, and
// parts are never confused however they are spelt.
func testScoped(t *testing.T, newStore NewStore) {
	f := newFixture(t, newStore, longPeriod, longPeriod)
	v := f.scope
	keys := []idempotency.Key{
		{Tenant: "a", Operation: "op", Value: v},
		{Tenant: "b", Operation: "op", Value: v},
		{Tenant: "a", Operation: "op2", Value: v},
		{Tenant: "a/op", Operation: "x", Value: v},
		{Tenant: "a", Operation: "op/x", Value: v},
		{Tenant: "a", Operation: "op", Value: v + "/x"},
		{Tenant: "1:a", Operation: "op", Value: v},
		{Tenant: "1", Operation: "a:op", Value: v},
		{Tenant: "a{b}", Operation: "op", Value: v + "}"},
		{Tenant: "A", Operation: "op", Value: v},
		{Tenant: "ü", Operation: "操作", Value: v + "-ключ"},
	}
	owners := make([]idempotency.Record, len(keys))
	for i, k := range keys {
		owners[i] = f.begin(k, fp)
	}
	for i, k := range keys {
		f.complete(k, fp, owners[i].Attempt, []byte(k.String()))
	}
	for _, k := range keys {
		if rec := f.replay(k, fp, idempotency.StateDone); string(rec.Response) != k.String() {
			t.Fatalf("key %q replays %q", k.String(), rec.Response)
		}
	}
}

// testCancelled: a cancelled context stops every method before it does
// anything.
func testCancelled(t *testing.T, newStore NewStore) {
	f := newFixture(t, newStore, longPeriod, longPeriod)
	k := f.key("cancelled")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, created, err := f.s.Begin(ctx, k, fp)
	wantErr(t, "Begin", err, context.Canceled)
	if created {
		t.Fatal("cancelled Begin created")
	}
	if _, found := f.get(k); found {
		t.Fatal("cancelled Begin stored a record")
	}
	own := f.begin(k, fp)
	wantErr(t, "Complete", f.s.Complete(ctx, k, fp, own.Attempt, nil), context.Canceled)
	wantErr(t, "Fail", f.s.Fail(ctx, k, fp, own.Attempt, false), context.Canceled)
	_, err = f.s.Renew(ctx, k, fp, own.Attempt)
	wantErr(t, "Renew", err, context.Canceled)
	_, _, err = f.s.Get(ctx, k)
	wantErr(t, "Get", err, context.Canceled)
	if rec, _ := f.get(k); rec.State != idempotency.StateInProgress {
		t.Fatalf("cancelled calls changed the record: %+v", rec)
	}
}
