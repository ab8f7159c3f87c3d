package telemetry_test

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/factum-go/factum/idempotency"
	"github.com/factum-go/factum/idempotency/idempotencytest"
	"github.com/factum-go/factum/prepare"
	"github.com/factum-go/factum/prepare/preparetest"
	"github.com/factum-go/factum/telemetry"
	"github.com/prometheus/client_golang/prometheus"
)

func metricsOnly(t *testing.T) (*telemetry.Telemetry, *prometheus.Registry) {
	t.Helper()
	reg := prometheus.NewRegistry()
	tel, err := telemetry.New(telemetry.Config{Registerer: reg})
	if err != nil {
		t.Fatal(err)
	}
	return tel, reg
}

// counted is the counter of the family whose labels include want, 0 when
// there is none.
func counted(t *testing.T, reg *prometheus.Registry, name string, want map[string]string) float64 {
	t.Helper()
	m := sample(scrape(t, reg), name, want)
	if m == nil || m.Counter == nil {
		return 0
	}
	return m.GetCounter().GetValue()
}

// The decorators keep the contracts: the kits pass through them, the
// atomic key change and the purge included.
func TestTheKeyDecoratorsKeepTheContracts(t *testing.T) {
	t.Run("prepare", func(t *testing.T) {
		preparetest.Run(t, func(t *testing.T) preparetest.Target {
			tel, _ := metricsOnly(t)
			b := tel.PrepareBackend(prepare.NewMemory(prepare.MemoryConfig{}))
			if _, ok := b.(prepare.KeyChanger); !ok {
				t.Fatal("the decorator hides the memory backend's KeyChanger")
			}
			return preparetest.Target{Backend: b}
		})
	})
	t.Run("idempotency", func(t *testing.T) {
		// One memory store per test is the backend; each call is another
		// instance on it, through its own decorator.
		var (
			mu     sync.Mutex
			stores = map[*testing.T]*idempotency.Memory{}
		)
		idempotencytest.Run(t, func(t *testing.T, p idempotency.Policy) idempotency.Store {
			mu.Lock()
			defer mu.Unlock()
			m, ok := stores[t]
			if !ok || m.Policy() != p {
				var err error
				if m, err = idempotency.NewMemory(idempotency.MemoryConfig{Policy: p}); err != nil {
					t.Fatal(err)
				}
				stores[t] = m
				t.Cleanup(func() {
					mu.Lock()
					defer mu.Unlock()
					delete(stores, t)
				})
			}
			tel, _ := metricsOnly(t)
			s := tel.IdempotencyStore(m)
			if _, ok := s.(idempotency.Purger); !ok {
				t.Fatal("the decorator hides the memory store's Purger")
			}
			return s
		})
	})
}

func TestIdempotencyOutcomesAreCounted(t *testing.T) {
	ctx := context.Background()
	tel, reg := metricsOnly(t)
	m, err := idempotency.NewMemory(idempotency.MemoryConfig{})
	if err != nil {
		t.Fatal(err)
	}
	s := tel.IdempotencyStore(m)
	k := idempotency.Key{Tenant: "t", Operation: "POST /orders", Value: "k-1"}
	rec, created, err := s.Begin(ctx, k, "fp-1")
	if err != nil || !created {
		t.Fatalf("begin: %v %v", created, err)
	}
	if _, _, err := s.Begin(ctx, k, "fp-1"); !errors.Is(err, idempotency.ErrInProgress) {
		t.Fatalf("begin in progress: %v", err)
	}
	if _, _, err := s.Begin(ctx, k, "fp-2"); !errors.Is(err, idempotency.ErrConflict) {
		t.Fatalf("begin other payload: %v", err)
	}
	if err := s.Complete(ctx, k, "fp-1", rec.Attempt, []byte("{}")); err != nil {
		t.Fatal(err)
	}
	if err := s.Complete(ctx, k, "fp-1", rec.Attempt, []byte("{}")); !errors.Is(err, idempotency.ErrStaleAttempt) {
		t.Fatalf("complete twice: %v", err)
	}
	for range 3 {
		if _, created, err := s.Begin(ctx, k, "fp-1"); err != nil || created {
			t.Fatalf("replay: %v %v", created, err)
		}
	}
	if _, found, err := s.Get(ctx, idempotency.Key{Tenant: "t", Operation: "POST /orders", Value: "none"}); err != nil || found {
		t.Fatalf("get: %v %v", found, err)
	}
	const name = "factum_idempotency_key_operations_total"
	for _, c := range []struct {
		op, outcome string
		want        float64
	}{
		{"begin", "created", 1}, {"begin", "in_progress", 1}, {"begin", "conflict", 1}, {"begin", "done", 3},
		{"complete", "ok", 1}, {"complete", "stale_attempt", 1}, {"get", "not_found", 1},
	} {
		if got := counted(t, reg, name, map[string]string{"operation": c.op, "outcome": c.outcome}); got != c.want {
			t.Errorf("%s{%s, %s} = %v, want %v", name, c.op, c.outcome, got, c.want)
		}
	}
}

func TestPrepareOutcomesAreCounted(t *testing.T) {
	ctx := context.Background()
	tel, reg := metricsOnly(t)
	b := tel.PrepareBackend(prepare.NewMemory(prepare.MemoryConfig{}))
	kc := b.(prepare.KeyChanger)
	steps := []func() (bool, error){
		func() (bool, error) { return b.Prepare(ctx, "email", "a@x", []byte("u1"), prepare.TTLForever) },
		func() (bool, error) { return b.Prepare(ctx, "email", "b@x", []byte("u2"), prepare.TTLForever) },
		func() (bool, error) { return b.Prepare(ctx, "email", "a@x", []byte("u3"), prepare.TTLForever) }, // held: refused
		func() (bool, error) {
			return b.Reprepare(ctx, "email", "a@x", []byte("u1"), []byte("u1b"), prepare.TTLForever)
		},
		func() (bool, error) { return b.RollbackValue(ctx, "email", "a@x", []byte("nope")) }, // refused
		func() (bool, error) { return b.Rollback(ctx, "email", "b@x") },
		func() (bool, error) {
			return kc.ChangeKey(ctx, "email", "a@x", []byte("u1b"), "c@x", []byte("u1b"), prepare.TTLForever)
		},
	}
	want := []bool{true, true, false, true, false, true, true}
	for i, step := range steps {
		if ok, err := step(); err != nil || ok != want[i] {
			t.Fatalf("step %d: %v %v, want %v", i, ok, err, want[i])
		}
	}
	if _, err := kc.ChangeKey(ctx, "email", "a@x", []byte("u1b"), "d@x", []byte("u1b"), prepare.TTLForever); !errors.Is(err, prepare.ErrNotHeld) {
		t.Fatalf("change a key not held: %v", err)
	}
	if _, found, err := b.Get(ctx, "email", "c@x"); err != nil || !found {
		t.Fatalf("get: %v %v", found, err)
	}
	const name = "factum_prepare_key_operations_total"
	for _, c := range []struct {
		op, outcome string
		want        float64
	}{
		{"prepare", "done", 2}, {"prepare", "refused", 1}, {"reprepare", "done", 1}, {"rollback_value", "refused", 1},
		{"rollback", "done", 1}, {"change_key", "done", 1}, {"change_key", "not_held", 1}, {"get", "found", 1},
	} {
		if got := counted(t, reg, name, map[string]string{"operation": c.op, "outcome": c.outcome}); got != c.want {
			t.Errorf("%s{%s, %s} = %v, want %v", name, c.op, c.outcome, got, c.want)
		}
	}
}

// Without metrics the decorators are not there.
func TestTheKeyDecoratorsNeedMetrics(t *testing.T) {
	tel, err := telemetry.New(telemetry.Config{})
	if err != nil {
		t.Fatal(err)
	}
	b := prepare.NewMemory(prepare.MemoryConfig{})
	if got := tel.PrepareBackend(b); got != prepare.Backend(b) {
		t.Error("a prepare backend was wrapped without metrics")
	}
}
