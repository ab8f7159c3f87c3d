package idempotencymodel

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/factum-go/factum/idempotency"
	"pgregory.net/rapid"
)

// NewStore returns an empty store for one rapid run and a function that
// releases it.
type NewStore func(t *rapid.T) (idempotency.Store, func())

type record struct {
	state    idempotency.State
	fp       string
	attempt  uint64
	response string
}

type machine struct {
	ctx   context.Context
	s     idempotency.Store
	model map[string]*record
	seq   int
}

var (
	keyValues    = []string{"k1", "k2", "k3"}
	fingerprints = []string{"sha256:aa", "sha256:bb"}
)

func key(v string) idempotency.Key {
	return idempotency.Key{Tenant: "model", Operation: "POST /model", Value: v}
}

func (m *machine) Begin(t *rapid.T) {
	kv, fp := rapid.SampledFrom(keyValues).Draw(t, "key"), rapid.SampledFrom(fingerprints).Draw(t, "fp")
	rec, created, err := m.s.Begin(m.ctx, key(kv), fp)
	cur := m.model[kv]
	switch {
	case cur == nil || cur.fp == fp && cur.state == idempotency.StateRetryable:
		if err != nil || !created || rec.State != idempotency.StateInProgress || rec.Fingerprint != fp {
			t.Fatalf("begin %s %s on %+v: %+v created=%v %v, want a new claim", kv, fp, cur, rec, created, err)
		}
		if cur != nil && rec.Attempt <= cur.attempt {
			t.Fatalf("begin %s: took over with attempt %d, not above %d", kv, rec.Attempt, cur.attempt)
		}
		m.model[kv] = &record{state: idempotency.StateInProgress, fp: fp, attempt: rec.Attempt}
	case cur.fp != fp:
		if !errors.Is(err, idempotency.ErrConflict) || created {
			t.Fatalf("begin %s %s on %+v: created=%v %v, want ErrConflict", kv, fp, cur, created, err)
		}
	case cur.state == idempotency.StateInProgress:
		if !errors.Is(err, idempotency.ErrInProgress) || created || rec.Attempt != cur.attempt {
			t.Fatalf("begin %s on %+v: %+v created=%v %v, want ErrInProgress with attempt %d", kv, cur, rec, created, err, cur.attempt)
		}
	default: // done or failed: replayed
		if err != nil || created || rec.State != cur.state || string(rec.Response) != cur.response {
			t.Fatalf("begin %s on %+v: %+v created=%v %v, want the record replayed", kv, cur, rec, created, err)
		}
	}
}

// pick draws a key that has a record, with its fingerprint and its
// current or a stale attempt.
func (m *machine) pick(t *rapid.T) (kv string, cur *record, attempt uint64) {
	kv = rapid.SampledFrom(keyValues).Draw(t, "key")
	cur = m.model[kv]
	if cur == nil {
		return kv, nil, 1
	}
	attempt = cur.attempt
	if rapid.IntRange(0, 3).Draw(t, "stale") == 0 && attempt > 1 {
		attempt--
	}
	return kv, cur, attempt
}

// finishError is the contract's refusal of Complete, Fail or Renew by
// attempt, or nil when it is allowed.
func finishError(cur *record, attempt uint64) error {
	switch {
	case cur == nil:
		return idempotency.ErrLeaseExpired
	case cur.state != idempotency.StateInProgress || cur.attempt != attempt:
		return idempotency.ErrStaleAttempt
	}
	return nil
}

func (m *machine) Complete(t *rapid.T) {
	kv, cur, attempt := m.pick(t)
	fp := fingerprints[0]
	if cur != nil {
		fp = cur.fp
	}
	m.seq++
	response := "response-" + string(rune('a'+m.seq%26))
	err := m.s.Complete(m.ctx, key(kv), fp, attempt, []byte(response))
	want := finishError(cur, attempt)
	if want == nil {
		if err != nil {
			t.Fatalf("complete %s attempt %d on %+v: %v", kv, attempt, cur, err)
		}
		cur.state, cur.response = idempotency.StateDone, response
		return
	}
	if !errors.Is(err, want) {
		t.Fatalf("complete %s attempt %d on %+v: %v, want %v", kv, attempt, cur, err, want)
	}
}

func (m *machine) Fail(t *rapid.T) {
	kv, cur, attempt := m.pick(t)
	fp := fingerprints[0]
	if cur != nil {
		fp = cur.fp
	}
	retryable := rapid.Bool().Draw(t, "retryable")
	err := m.s.Fail(m.ctx, key(kv), fp, attempt, retryable)
	want := finishError(cur, attempt)
	if want == nil {
		if err != nil {
			t.Fatalf("fail %s attempt %d on %+v: %v", kv, attempt, cur, err)
		}
		cur.state = idempotency.StateFailed
		if retryable {
			cur.state = idempotency.StateRetryable
		}
		return
	}
	if !errors.Is(err, want) {
		t.Fatalf("fail %s attempt %d on %+v: %v, want %v", kv, attempt, cur, err, want)
	}
}

func (m *machine) Renew(t *rapid.T) {
	kv, cur, attempt := m.pick(t)
	fp := fingerprints[0]
	if cur != nil {
		fp = cur.fp
	}
	rec, err := m.s.Renew(m.ctx, key(kv), fp, attempt)
	want := finishError(cur, attempt)
	if want == nil {
		if err != nil || rec.Attempt != attempt || rec.State != idempotency.StateInProgress {
			t.Fatalf("renew %s attempt %d on %+v: %+v %v", kv, attempt, cur, rec, err)
		}
		return
	}
	if !errors.Is(err, want) {
		t.Fatalf("renew %s attempt %d on %+v: %v, want %v", kv, attempt, cur, err, want)
	}
}

func (m *machine) Get(t *rapid.T) {
	kv := rapid.SampledFrom(keyValues).Draw(t, "key")
	rec, found, err := m.s.Get(m.ctx, key(kv))
	if err != nil {
		t.Fatalf("get %s: %v", kv, err)
	}
	cur := m.model[kv]
	switch {
	case cur == nil:
		if found {
			t.Fatalf("get %s: found %+v, the model has none", kv, rec)
		}
	case cur.state == idempotency.StateRetryable:
		// A released key may be kept as a retryable record or dropped.
		if found && (rec.State != idempotency.StateRetryable || rec.Fingerprint != cur.fp) {
			t.Fatalf("get %s: %+v, want retryable or nothing", kv, rec)
		}
	default:
		if !found || rec.State != cur.state || rec.Fingerprint != cur.fp || rec.Attempt != cur.attempt || string(rec.Response) != cur.response {
			t.Fatalf("get %s: %+v found=%v, want %+v", kv, rec, found, cur)
		}
	}
}

// BeginRace begins one key from several goroutines at once with the same
// fingerprint: when the key is free (or released), exactly one claims it
// and the others get ErrInProgress; otherwise each gets what Begin gives
// one caller.
func (m *machine) BeginRace(t *rapid.T) {
	kv := rapid.SampledFrom(keyValues).Draw(t, "key")
	cur := m.model[kv]
	fp := rapid.SampledFrom(fingerprints).Draw(t, "fp")
	if cur != nil && (cur.fp != fp || cur.state != idempotency.StateRetryable) {
		t.Skip("not a claimable key")
	}
	n := rapid.IntRange(2, 4).Draw(t, "racers")
	recs := make([]idempotency.Record, n)
	created := make([]bool, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() { recs[i], created[i], errs[i] = m.s.Begin(m.ctx, key(kv), fp) })
	}
	wg.Wait()
	winner := -1
	for i := range n {
		switch {
		case created[i] && winner >= 0:
			t.Fatalf("race for %s: two callers claimed it (attempts %d and %d)", kv, recs[winner].Attempt, recs[i].Attempt)
		case created[i]:
			if errs[i] != nil {
				t.Fatalf("race for %s: created with error %v", kv, errs[i])
			}
			winner = i
		case !errors.Is(errs[i], idempotency.ErrInProgress):
			t.Fatalf("race for %s: a loser got %+v %v, want ErrInProgress", kv, recs[i], errs[i])
		}
	}
	if winner < 0 {
		t.Fatalf("race for claimable key %s: nobody claimed it: %v", kv, errs)
	}
	if cur != nil && recs[winner].Attempt <= cur.attempt {
		t.Fatalf("race for %s: took over with attempt %d, not above %d", kv, recs[winner].Attempt, cur.attempt)
	}
	m.model[kv] = &record{state: idempotency.StateInProgress, fp: fp, attempt: recs[winner].Attempt}
}

// Check is rapid's invariant hook; the actions compare the store.
func (m *machine) Check(*rapid.T) {}

// Check runs the state machine against stores from newStore, one per
// rapid run.
func Check(t *testing.T, newStore NewStore) {
	rapid.Check(t, func(t *rapid.T) {
		s, release := newStore(t)
		defer release()
		m := &machine{ctx: context.Background(), s: s, model: map[string]*record{}}
		t.Repeat(rapid.StateMachineActions(m))
	})
}
