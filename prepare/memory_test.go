package prepare_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/factum-go/factum/prepare"
	"github.com/factum-go/factum/prepare/preparetest"
)

func TestMemoryContract(t *testing.T) {
	preparetest.Run(t, func(t *testing.T) preparetest.Target {
		clock := preparetest.NewClock(time.Now())
		// The backend reads its clock under its shard lock, so a clock
		// read that waits at the closed gate holds the lock: that is the
		// kit's Hold.
		var gate sync.RWMutex
		gated := func() time.Time {
			gate.RLock()
			defer gate.RUnlock()
			return clock.Now()
		}
		return preparetest.Target{Backend: prepare.NewMemory(prepare.MemoryConfig{Clock: gated}), Clock: clock,
			Hold: func(*testing.T, string, string) func() {
				gate.Lock()
				return gate.Unlock
			}}
	})
}

func TestMemoryRealClockContract(t *testing.T) {
	if testing.Short() {
		t.Skip("sleeps past real expiries")
	}
	preparetest.Run(t, func(t *testing.T) preparetest.Target {
		return preparetest.Target{Backend: prepare.NewMemory(prepare.MemoryConfig{})}
	})
}

// twoStep hides the memory backend's KeyChanger, so Key.ChangeKey falls
// back to the specification's compensating two-step in every case of the
// kit (Run itself checks the ChangeKey cases so on every backend).
type twoStep struct{ prepare.Backend }

func TestTwoStepChangeKeyContract(t *testing.T) {
	preparetest.Run(t, func(t *testing.T) preparetest.Target {
		clock := preparetest.NewClock(time.Now())
		return preparetest.Target{Backend: twoStep{prepare.NewMemory(prepare.MemoryConfig{Clock: clock.Now})}, Clock: clock}
	})
}

func TestMemoryPurge(t *testing.T) {
	ctx := context.Background()
	clock := preparetest.NewClock(time.Now())
	m := prepare.NewMemory(prepare.MemoryConfig{Clock: clock.Now})
	k, err := prepare.NewKey[string]("sku", m)
	if err != nil {
		t.Fatal(err)
	}
	for i, key := range []string{"a", "b", "c"} {
		if _, err := k.Prepare(ctx, key, prepare.ExpiresAt("v", clock.Now().Add(time.Duration(i+1)*time.Second))); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := k.Prepare(ctx, "d", prepare.Forever("v")); err != nil {
		t.Fatal(err)
	}
	clock.Advance(2*time.Second + time.Millisecond)
	n, err := m.Purge(ctx)
	if err != nil || n != 2 {
		t.Fatalf("Purge = %d, %v; want 2 (a and b lapsed)", n, err)
	}
	for key, want := range map[string]bool{"a": false, "b": false, "c": true, "d": true} {
		if _, ok, err := k.GetValue(ctx, key); err != nil || ok != want {
			t.Fatalf("GetValue(%q) found = %v, %v; want %v", key, ok, err, want)
		}
	}
}

// The line between live and expired is the same millisecond everywhere:
// live through ExpiresAt, expired one millisecond later.
func TestExpiryBoundary(t *testing.T) {
	ctx := context.Background()
	start := time.UnixMilli(1_700_000_000_000)
	clock := preparetest.NewClock(start)
	k, err := prepare.NewKey[string]("sku", prepare.NewMemory(prepare.MemoryConfig{Clock: clock.Now}))
	if err != nil {
		t.Fatal(err)
	}
	pv := prepare.ExpiresAt("v", start.Add(time.Second))
	if ok, err := k.Prepare(ctx, "x", pv); !ok || err != nil {
		t.Fatal(ok, err)
	}
	clock.Advance(time.Second)
	if _, ok, _ := k.Get(ctx, "x"); !ok || pv.ExpiredAt(clock.Now()) {
		t.Fatal("expired at its own expiry millisecond; want live through it")
	}
	clock.Advance(time.Millisecond)
	if _, ok, _ := k.Get(ctx, "x"); ok || !pv.ExpiredAt(clock.Now()) {
		t.Fatal("live one millisecond after its expiry")
	}
}
