package preparemodel

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/factum-go/factum/prepare"
	"pgregory.net/rapid"
)

// NewBackend returns an empty backend for one rapid run and a function
// that releases it.
type NewBackend func(t *rapid.T) (prepare.Backend, func())

// Name is the key name the model reserves under.
const Name = "model_username"

type held struct {
	value     string
	expiresAt int64
}

type machine struct {
	ctx     context.Context
	b       prepare.Backend
	model   map[string]held
	farAway int64
}

var (
	keys   = []string{"alice", "bob", "carol"}
	values = []string{"u1", "u2", "u3"}
)

func (m *machine) expiry(t *rapid.T) int64 {
	if rapid.Bool().Draw(t, "forever") {
		return prepare.TTLForever
	}
	return m.farAway
}

func (m *machine) Prepare(t *rapid.T) {
	k, v, exp := rapid.SampledFrom(keys).Draw(t, "key"), rapid.SampledFrom(values).Draw(t, "value"), m.expiry(t)
	ok, err := m.b.Prepare(m.ctx, Name, k, []byte(v), exp)
	if err != nil {
		t.Fatalf("prepare %s=%s: %v", k, v, err)
	}
	_, taken := m.model[k]
	if ok == taken {
		t.Fatalf("prepare %s=%s: %v, but the key is taken=%v", k, v, ok, taken)
	}
	if ok {
		m.model[k] = held{v, exp}
	}
}

func (m *machine) Get(t *rapid.T) {
	k := rapid.SampledFrom(keys).Draw(t, "key")
	rec, found, err := m.b.Get(m.ctx, Name, k)
	if err != nil {
		t.Fatalf("get %s: %v", k, err)
	}
	want, has := m.model[k]
	if found != has {
		t.Fatalf("get %s: found=%v, model has=%v", k, found, has)
	}
	if has && (string(rec.Value) != want.value || rec.ExpiresAt != want.expiresAt || rec.Expired) {
		t.Fatalf("get %s: %q expires %d expired=%v, want %q expires %d", k, rec.Value, rec.ExpiresAt, rec.Expired, want.value, want.expiresAt)
	}
}

func (m *machine) Rollback(t *rapid.T) {
	k := rapid.SampledFrom(keys).Draw(t, "key")
	ok, err := m.b.Rollback(m.ctx, Name, k)
	if err != nil {
		t.Fatalf("rollback %s: %v", k, err)
	}
	if _, has := m.model[k]; ok != has {
		t.Fatalf("rollback %s: %v, model has=%v", k, ok, has)
	}
	delete(m.model, k)
}

func (m *machine) RollbackValue(t *rapid.T) {
	k, v := rapid.SampledFrom(keys).Draw(t, "key"), rapid.SampledFrom(values).Draw(t, "value")
	ok, err := m.b.RollbackValue(m.ctx, Name, k, []byte(v))
	if err != nil {
		t.Fatalf("rollback %s=%s: %v", k, v, err)
	}
	h, has := m.model[k]
	if want := has && h.value == v; ok != want {
		t.Fatalf("rollback %s=%s: %v, want %v (model %+v)", k, v, ok, want, h)
	}
	if ok {
		delete(m.model, k)
	}
}

func (m *machine) Reprepare(t *rapid.T) {
	k := rapid.SampledFrom(keys).Draw(t, "key")
	old, nv, exp := rapid.SampledFrom(values).Draw(t, "old"), rapid.SampledFrom(values).Draw(t, "new"), m.expiry(t)
	ok, err := m.b.Reprepare(m.ctx, Name, k, []byte(old), []byte(nv), exp)
	if err != nil {
		t.Fatalf("reprepare %s %s->%s: %v", k, old, nv, err)
	}
	h, has := m.model[k]
	if want := has && h.value == old; ok != want {
		t.Fatalf("reprepare %s %s->%s: %v, want %v (model %+v, has %v)", k, old, nv, ok, want, h, has)
	}
	if ok {
		m.model[k] = held{nv, exp}
	}
}

func (m *machine) ChangeKey(t *rapid.T) {
	kc, ok := m.b.(prepare.KeyChanger)
	if !ok {
		t.Skip("the backend has no atomic key change")
	}
	oldKey, newKey := rapid.SampledFrom(keys).Draw(t, "old key"), rapid.SampledFrom(keys).Draw(t, "new key")
	if oldKey == newKey {
		t.Skip("same key")
	}
	oldValue, newValue, exp := rapid.SampledFrom(values).Draw(t, "old value"), rapid.SampledFrom(values).Draw(t, "new value"), m.expiry(t)
	changed, err := kc.ChangeKey(m.ctx, Name, oldKey, []byte(oldValue), newKey, []byte(newValue), exp)
	_, newTaken := m.model[newKey]
	h, oldHas := m.model[oldKey]
	switch {
	case newTaken:
		if err != nil || changed {
			t.Fatalf("change %s->%s with %s taken: %v %v, want false", oldKey, newKey, newKey, changed, err)
		}
	case !oldHas || h.value != oldValue:
		if !errors.Is(err, prepare.ErrNotHeld) {
			t.Fatalf("change %s->%s, old not held by %s: %v %v, want ErrNotHeld", oldKey, newKey, oldValue, changed, err)
		}
	default:
		if err != nil || !changed {
			t.Fatalf("change %s->%s: %v %v, want true", oldKey, newKey, changed, err)
		}
		delete(m.model, oldKey)
		m.model[newKey] = held{newValue, exp}
	}
}

// PrepareRace prepares one free key from several goroutines at once, each
// with its own value: exactly one wins, and the key holds its value.
func (m *machine) PrepareRace(t *rapid.T) {
	var free []string
	for _, k := range keys {
		if _, taken := m.model[k]; !taken {
			free = append(free, k)
		}
	}
	if len(free) == 0 {
		t.Skip("no free key")
	}
	k := rapid.SampledFrom(free).Draw(t, "key")
	n := rapid.IntRange(2, len(values)).Draw(t, "racers")
	won := make([]bool, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() { won[i], errs[i] = m.b.Prepare(m.ctx, Name, k, []byte(values[i]), prepare.TTLForever) })
	}
	wg.Wait()
	winner := -1
	for i := range n {
		switch {
		case errs[i] != nil:
			t.Fatalf("race for %s: %v", k, errs[i])
		case won[i] && winner >= 0:
			t.Fatalf("race for %s: %s and %s both prepared it", k, values[winner], values[i])
		case won[i]:
			winner = i
		}
	}
	if winner < 0 {
		t.Fatalf("race for free key %s: nobody prepared it", k)
	}
	m.model[k] = held{values[winner], prepare.TTLForever}
}

// Check is rapid's invariant hook; the actions compare the backend.
func (m *machine) Check(*rapid.T) {}

// Check runs the state machine against backends from newBackend, one per
// rapid run.
func Check(t *testing.T, newBackend NewBackend) {
	rapid.Check(t, func(t *rapid.T) {
		b, release := newBackend(t)
		defer release()
		far := time.Now().Add(6 * time.Hour).UnixMilli()
		m := &machine{ctx: context.Background(), b: b, model: map[string]held{}, farAway: far}
		t.Repeat(rapid.StateMachineActions(m))
	})
}
