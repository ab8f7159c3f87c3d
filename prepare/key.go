package prepare

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"
	"unicode/utf8"

	"github.com/factum-go/factum"
)

// MaxKeyLen bounds an application key, in bytes.
const MaxKeyLen = 512

// compensationTimeout bounds a release done on an error path, which runs
// even when the caller's context is already cancelled.
const compensationTimeout = 10 * time.Second

// Key reserves application keys (usernames, SKUs) for values of type V. Its
// name scopes its keys: two Keys with different names never see each
// other's reservations, even on one backend. A Key is safe for concurrent
// use; it holds no state besides its name and backend.
//
// Values are compared by their JSON encoding (encoding/json): a struct's
// fields encode in declaration order and a map's keys sorted, so equal
// values encode equally. Fields that do not encode (unexported ones, those
// tagged "-") do not take part in the comparison, and a type with a custom
// MarshalJSON must encode deterministically.
//
// Atomicity comes from the backend; the Key only encodes, validates and
// decodes. Nothing here is a transaction with the event store (see
// [UsingPrepare]).
type Key[V any] struct {
	name      string
	backend   Backend
	perTenant bool
}

// NewKey returns the Key called name over backend. name follows
// [factum.ValidateName]. Options change how keys are scoped (PerTenant).
func NewKey[V any](name string, backend Backend, opts ...KeyOption) (*Key[V], error) {
	if err := factum.ValidateName("prepare key", name); err != nil {
		return nil, err
	}
	if backend == nil {
		return nil, factum.IllegalArgument("prepare: nil backend")
	}
	var o keyOptions
	for _, opt := range opts {
		opt(&o)
	}
	return &Key[V]{name: name, backend: backend, perTenant: o.perTenant}, nil
}

// Name returns the key's name.
func (k *Key[V]) Name() string { return k.name }

// ValidateKey checks an application key: 1 to MaxKeyLen bytes of valid
// UTF-8 without NUL bytes, which every backend stores exactly.
func ValidateKey(key string) error {
	switch {
	case key == "":
		return factum.IllegalArgument("prepare: empty key")
	case len(key) > MaxKeyLen:
		return factum.IllegalArgument(fmt.Sprintf("prepare: key %.20q... is longer than %d bytes", key, MaxKeyLen))
	case !utf8.ValidString(key):
		return factum.IllegalArgument(fmt.Sprintf("prepare: key %q is not valid UTF-8", key))
	}
	for i := 0; i < len(key); i++ {
		if key[i] == 0 {
			return factum.IllegalArgument(fmt.Sprintf("prepare: key %q holds a NUL byte at %d", key, i))
		}
	}
	return nil
}

func validExpiry(expiresAt int64) error {
	if expiresAt == TTLForever || (expiresAt > 0 && expiresAt <= MaxExpiry) {
		return nil
	}
	return factum.IllegalArgument(fmt.Sprintf(
		"prepare: expiry %d is neither TTLForever nor a Unix millisecond time in 1..%d (use Forever, ExpiresAt or ExpiresIn)",
		expiresAt, MaxExpiry))
}

func (k *Key[V]) encode(v V) ([]byte, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, factum.Errorf(factum.CodeIllegalArgument, "prepare %s: encode value: %w", k.name, err)
	}
	return b, nil
}

// encodeChange checks next's expiry and encodes old and next's value, for
// the calls that replace the reservation for old by next.
func (k *Key[V]) encodeChange(old V, next PreparedValue[V]) (ob, nb []byte, err error) {
	if err := validExpiry(next.ExpiresAt); err != nil {
		return nil, nil, err
	}
	if ob, err = k.encode(old); err != nil {
		return nil, nil, err
	}
	if nb, err = k.encode(next.Value); err != nil {
		return nil, nil, err
	}
	return ob, nb, nil
}

func (k *Key[V]) decode(key string, r Record) (PreparedValue[V], error) {
	var v V
	if err := json.Unmarshal(r.Value, &v); err != nil {
		return PreparedValue[V]{}, factum.Errorf(factum.CodeIllegalState,
			"prepare %s/%q: decode stored value: %w", k.name, key, err)
	}
	return PreparedValue[V]{Value: v, ExpiresAt: r.ExpiresAt}, nil
}

// wrap adds the operation and key to a backend error.
func (k *Key[V]) wrap(op, key string, err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("prepare %s %s/%q: %w", op, k.name, key, err)
}

// Prepare reserves key for v unless a live reservation holds it, and
// reports whether this call reserved it. A key whose reservation has expired
// can be prepared again. Preparing a key already held by an equal value
// returns false too: a reservation is not re-entrant.
//
// An expiry that has already passed by the backend's clock reserves
// nothing: the call may report true, but the key is free at once.
func (k *Key[V]) Prepare(ctx context.Context, key string, v PreparedValue[V]) (bool, error) {
	sk, err := k.stored(ctx, key)
	if err != nil {
		return false, err
	}
	if err := validExpiry(v.ExpiresAt); err != nil {
		return false, err
	}
	b, err := k.encode(v.Value)
	if err != nil {
		return false, err
	}
	ok, err := k.backend.Prepare(ctx, k.name, sk, b, v.ExpiresAt)
	return ok, k.wrap("prepare", key, err)
}

// Get returns the live reservation of key, and false when the key is free
// (never prepared, rolled back or expired).
func (k *Key[V]) Get(ctx context.Context, key string) (PreparedValue[V], bool, error) {
	r, ok, err := k.get(ctx, key)
	if err != nil || !ok || r.Expired {
		return PreparedValue[V]{}, false, err
	}
	pv, err := k.decode(key, r)
	return pv, err == nil, err
}

// GetValue returns the stored reservation of key with its expiry, even when
// it has expired, and false when nothing is stored. Backends with native
// expiry (Redis) drop expired records, so there an expired key reads as
// absent; the SQL and memory backends keep them until they are purged or
// the key is prepared again.
func (k *Key[V]) GetValue(ctx context.Context, key string) (PreparedValue[V], bool, error) {
	r, ok, err := k.get(ctx, key)
	if err != nil || !ok {
		return PreparedValue[V]{}, false, err
	}
	pv, err := k.decode(key, r)
	return pv, err == nil, err
}

func (k *Key[V]) get(ctx context.Context, key string) (Record, bool, error) {
	sk, err := k.stored(ctx, key)
	if err != nil {
		return Record{}, false, err
	}
	r, ok, err := k.backend.Get(ctx, k.name, sk)
	return r, ok, k.wrap("get", key, err)
}

// Rollback releases key whatever value holds it, and reports whether a live
// reservation was released (false when there was nothing to release).
func (k *Key[V]) Rollback(ctx context.Context, key string) (bool, error) {
	sk, err := k.stored(ctx, key)
	if err != nil {
		return false, err
	}
	ok, err := k.backend.Rollback(ctx, k.name, sk)
	return ok, k.wrap("rollback", key, err)
}

// RollbackValue releases key only if a live reservation for v holds it, and
// reports whether it did (false when the key is free or holds another
// value). It is the safe release: it never takes away a reservation that
// expired and was then made by someone else.
func (k *Key[V]) RollbackValue(ctx context.Context, key string, v V) (bool, error) {
	sk, err := k.stored(ctx, key)
	if err != nil {
		return false, err
	}
	b, err := k.encode(v)
	if err != nil {
		return false, err
	}
	ok, err := k.backend.RollbackValue(ctx, k.name, sk, b)
	return ok, k.wrap("rollback", key, err)
}

// Reprepare replaces, on the same key, the live reservation for old by
// next (value and expiry), and reports whether it did: false when the key
// is free or holds a value other than old. It never creates a reservation.
// To move a reservation to another key use [Key.ChangeKey].
func (k *Key[V]) Reprepare(ctx context.Context, key string, old V, next PreparedValue[V]) (bool, error) {
	sk, err := k.stored(ctx, key)
	if err != nil {
		return false, err
	}
	ob, nb, err := k.encodeChange(old, next)
	if err != nil {
		return false, err
	}
	ok, err := k.backend.Reprepare(ctx, k.name, sk, ob, nb, next.ExpiresAt)
	return ok, k.wrap("reprepare", key, err)
}

// ChangeKey moves the reservation of old from oldKey to newKey, reserved
// for next: a rename. The outcomes:
//
//   - true: newKey is reserved for next and oldKey is released;
//   - false: newKey is held by a live reservation (whatever its value);
//     nothing changed;
//   - an error matching [ErrNotHeld] and factum.ErrIllegalState: oldKey is
//     not held by old (free, expired, or another value), and newKey is left
//     free;
//   - an IllegalArgument error when oldKey equals newKey: use
//     [Key.Reprepare] to change the value on one key.
//
// When newKey is taken the answer is false even if oldKey does not match,
// as in the specification's order (prepare the new key, then release the
// old one).
//
// On a backend that implements [KeyChanger] (all of factum's do) the change
// is one atomic step. On others it is the specification's compensating
// two-step: prepare newKey, then release oldKey conditionally, and on any
// failure of the second step release newKey again. Between the two steps
// both keys are held, and a crash there leaves both held until the new
// key's expiry, if any.
func (k *Key[V]) ChangeKey(ctx context.Context, oldKey string, old V, newKey string, next PreparedValue[V]) (bool, error) {
	oldStored, err := k.stored(ctx, oldKey)
	if err != nil {
		return false, err
	}
	newStored, err := k.stored(ctx, newKey)
	if err != nil {
		return false, err
	}
	if oldKey == newKey {
		return false, factum.IllegalArgument(fmt.Sprintf(
			"prepare %s: change key %q to itself; use Reprepare to change the value on one key", k.name, oldKey))
	}
	ob, nb, err := k.encodeChange(old, next)
	if err != nil {
		return false, err
	}
	var ok bool
	if kc, atomic := k.backend.(KeyChanger); atomic {
		ok, err = kc.ChangeKey(ctx, k.name, oldStored, ob, newStored, nb, next.ExpiresAt)
	} else {
		ok, err = k.changeInTwoSteps(ctx, oldStored, ob, newStored, nb, next.ExpiresAt)
	}
	if errors.Is(err, ErrNotHeld) {
		return false, factum.Errorf(factum.CodeIllegalState, "prepare %s: change key %q to %q: %w", k.name, oldKey, newKey, err)
	}
	return ok, k.wrap("change key", oldKey+" -> "+newKey, err)
}

func (k *Key[V]) changeInTwoSteps(ctx context.Context, oldKey string, ob []byte, newKey string, nb []byte, expiresAt int64) (bool, error) {
	ok, err := k.backend.Prepare(ctx, k.name, newKey, nb, expiresAt)
	if err != nil || !ok {
		return false, err
	}
	released, err := k.backend.RollbackValue(ctx, k.name, oldKey, ob)
	if err == nil && released {
		return true, nil
	}
	if err == nil {
		err = ErrNotHeld
	}
	// The release must run even when ctx is what failed the second step.
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), compensationTimeout)
	defer cancel()
	if _, rerr := k.backend.RollbackValue(cctx, k.name, newKey, nb); rerr != nil {
		err = errors.Join(err, fmt.Errorf("prepare %s: release new key %q: %w", k.name, newKey, rerr))
	}
	return false, err
}
