package preparetest

import (
	"context"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/internal/kit"
	"github.com/factum-go/factum/prepare"
)

// Target is one backend under test, and what the kit must know about its
// clock.
type Target struct {
	// Backend is the backend under test.
	Backend prepare.Backend
	// Clock is the clock that judges expiry in Backend, when the test
	// controls it; the kit then advances it instead of sleeping. Nil means
	// that Backend follows the real clock of this machine (Redis, or a
	// database's clock), and the kit sleeps past expiries.
	Clock *Clock
	// DropsExpired reports that Backend deletes a record once it expires
	// (native expiry), so GetValue reads an expired key as absent. When
	// false the kit requires GetValue to return expired records with their
	// value and expiry until they are purged or prepared again.
	DropsExpired bool
	// Peer, when set, is a second instance of Backend on the same storage
	// (another handle on the database or server), as a second process
	// would have; the kit runs the two against one another. Nil means
	// Backend alone (the memory backend has no second instance).
	Peer prepare.Backend
	// Hold, when set, takes the backend's own lock that every write of
	// (name, key) waits for (a row lock, the database's write lock) and
	// returns once it holds it; release lets the waiting writes go on. A
	// record of (name, key) exists when the kit calls Hold. Reads may wait
	// for the lock too.
	Hold func(t *testing.T, name, key string) (release func())
}

// NewTarget returns the target for one case of the kit. It may return the
// same backend to several cases; each case uses key names of its own.
// Register clean-up with t.Cleanup.
type NewTarget func(t *testing.T) Target

// Clock is a manual clock for backends that take one. It starts where told
// and moves only when advanced. It is safe for concurrent use.
type Clock struct{ ms atomic.Int64 }

// NewClock returns a clock showing start (to the millisecond).
func NewClock(start time.Time) *Clock {
	c := &Clock{}
	c.ms.Store(start.UnixMilli())
	return c
}

// Now returns the clock's time; pass it to the backend as its clock.
func (c *Clock) Now() time.Time { return time.UnixMilli(c.ms.Load()) }

// Advance moves the clock forward by d.
func (c *Clock) Advance(d time.Duration) { c.ms.Add(d.Milliseconds()) }

// Run runs the whole contract kit against the targets newTarget returns.
// Its cases run in parallel (t.Parallel), so they also race each other on
// one backend, and newTarget is called from several goroutines; the few
// that purge, hold the backend's lock or wait for expiries run alone first.
func Run(t *testing.T, newTarget NewTarget) {
	t.Helper()
	cases := []kit.Case[*env]{
		{Name: "PrepareGetRollback", Run: testPrepareGetRollback},
		{Name: "MissingKey", Run: testMissingKey},
		{Name: "Forever", Run: testForever},
		{Name: "RollbackValue", Run: testRollbackValue},
		{Name: "Reprepare", Run: testReprepare},
		{Name: "NamesScopeKeys", Run: testNamesScopeKeys},
		{Name: "AwkwardKeys", Run: testAwkwardKeys},
		{Name: "InvalidInput", Run: testInvalidInput},
		{Name: "DecodeMismatch", Run: testDecodeMismatch},
		{Name: "CancelledContext", Run: testCancelled},
		{Name: "ChangeKey", Run: testChangeKey},
		{Name: "ChangeKeyNewTaken", Run: testChangeKeyNewTaken},
		{Name: "ChangeKeyOldNotHeld", Run: testChangeKeyOldNotHeld},
		{Name: "ChangeKeyBothFail", Run: testChangeKeyBothFail},
		{Name: "ChangeKeySameKey", Run: testChangeKeySameKey},
		{Name: "Expiry", Run: testExpiry, Serial: true},
		{Name: "UsingPrepare", Run: testUsingPrepare},
		{Name: "UsingPrepareTaken", Run: testUsingPrepareTaken},
		{Name: "UsingPrepareError", Run: testUsingPrepareError},
		{Name: "UsingPreparePanic", Run: testUsingPreparePanic},
		{Name: "UsingPrepareCancelled", Run: testUsingPrepareCancelled},
		{Name: "UsingPrepareInvalidKey", Run: testUsingPrepareInvalidKey},
		{Name: "UsingPrepareAfterExpiry", Run: testUsingPrepareAfterExpiry, Serial: true},
		{Name: "ConcurrentPrepare", Run: testConcurrentPrepare},
		{Name: "ConcurrentReprepare", Run: testConcurrentReprepare},
		{Name: "ConcurrentChangeKeyAndRollback", Run: testConcurrentChangeAndRollback},
		{Name: "ConcurrentKeyChanges", Run: testConcurrentKeyChanges},
		{Name: "OpposingChangesOfLapsedKeys", Run: testOpposingChangesOfLapsedKeys, Serial: true},
		{Name: "LapseThenLateWriteRefused", Run: testLapseThenLateWrite, Serial: true},
		{Name: "Linearizable", Run: testLinearizable, Serial: true},
	}
	kit.RunParallel(t, func(t *testing.T) *env { return newEnv(t, newTarget(t)) }, cases)
	// The key-change fast path against its fallback, as testing/fstest
	// holds ReadFileFS to Open: the same cases over the backend with its
	// KeyChanger hidden, so that Key.ChangeKey takes the compensating
	// two-step, must pass alike.
	for _, c := range cases {
		if !strings.HasPrefix(c.Name, "ChangeKey") {
			continue
		}
		t.Run("TwoStepFallback/"+c.Name, func(t *testing.T) {
			t.Parallel()
			target := newTarget(t)
			if _, ok := target.Backend.(prepare.KeyChanger); !ok {
				t.Skip("the backend has no KeyChanger: every case above ran the fallback")
			}
			target.Backend = twoStep{target.Backend}
			target.Peer = nil
			c.Run(t, newEnv(t, target))
		})
	}
}

// twoStep hides a backend's KeyChanger.
type twoStep struct{ prepare.Backend }

// account is the value type the kit reserves keys for. The map makes the
// encoded-form comparison meaningful: equal maps built in different orders
// must match.
type account struct {
	ID   string         `json:"id"`
	Tags map[string]int `json:"tags,omitempty"`
}

// env is one case's view of the target.
type env struct {
	t      *testing.T
	target Target
	key    *prepare.Key[account]
	ctx    context.Context
}

func newEnv(t *testing.T, target Target) *env {
	t.Helper()
	if target.Backend == nil {
		t.Fatal("preparetest: NewTarget returned no backend")
	}
	return &env{t: t, target: target, key: newKey[account](t, target.Backend, uniqueName(t)), ctx: context.Background()}
}

// uniqueName returns a key name no other case or run uses.
func uniqueName(t *testing.T) string {
	t.Helper()
	return kit.UniqueName(t, "kit_")
}

func newKey[V any](t *testing.T, b prepare.Backend, name string) *prepare.Key[V] {
	t.Helper()
	k, err := prepare.NewKey[V](name, b)
	if err != nil {
		t.Fatalf("NewKey(%q): %v", name, err)
	}
	return k
}

// now is the time of the clock that judges expiry.
func (e *env) now() time.Time {
	if e.target.Clock != nil {
		return e.target.Clock.Now()
	}
	return time.Now()
}

// shortTTL is how long a reservation the kit means to see expire lasts.
// On a real clock it must outlast a few round trips on a loaded machine.
func (e *env) shortTTL() time.Duration {
	if e.target.Clock != nil {
		return time.Minute
	}
	return time.Second
}

// expiresSoon returns v reserved for shortTTL.
func (e *env) expiresSoon(v account) prepare.PreparedValue[account] {
	return prepare.ExpiresAt(v, e.now().Add(e.shortTTL()))
}

// passExpiry moves the backend's clock, or waits, until expiresAt has
// passed with a margin.
func (e *env) passExpiry(expiresAt int64) {
	e.t.Helper()
	if e.target.Clock != nil {
		if d := time.Duration(expiresAt-e.now().UnixMilli()+1) * time.Millisecond; d > 0 {
			e.target.Clock.Advance(d)
		}
		return
	}
	// The margin covers the backend judging "now" a little earlier than
	// this process (PostgreSQL's now() is the transaction's start).
	time.Sleep(time.Until(time.UnixMilli(expiresAt).Add(50 * time.Millisecond)))
}

// requireLive skips the case when a reservation expiring at expiresAt has
// already lapsed: on a real clock a stalled machine can outlast a short
// expiry before the kit has checked that the reservation is visible, and
// the case's later assertions would then be meaningless.
func (e *env) requireLive(expiresAt int64) {
	e.t.Helper()
	if e.now().UnixMilli() > expiresAt {
		e.t.Skipf("the machine stalled past a %v expiry before the kit could check it; rerun", e.shortTTL())
	}
}

func acct(id string) account { return account{ID: id} }

func (e *env) mustPrepare(key string, v prepare.PreparedValue[account]) {
	e.t.Helper()
	ok, err := e.key.Prepare(e.ctx, key, v)
	if err != nil || !ok {
		e.t.Fatalf("Prepare(%q, %v) = %v, %v; want true", key, v.Value.ID, ok, err)
	}
}

// wantHeld fails unless Get returns v for key.
func (e *env) wantHeld(key string, v prepare.PreparedValue[account]) {
	e.t.Helper()
	got, ok, err := e.key.Get(e.ctx, key)
	if err != nil || !ok {
		e.t.Fatalf("Get(%q) = %v, %v; want %v held", key, ok, err, v.Value.ID)
	}
	if !reflect.DeepEqual(got, v) {
		e.t.Fatalf("Get(%q) = %+v; want %+v", key, got, v)
	}
	gv, ok, err := e.key.GetValue(e.ctx, key)
	if err != nil || !ok || !reflect.DeepEqual(gv, v) {
		e.t.Fatalf("GetValue(%q) = %+v, %v, %v; want %+v", key, gv, ok, err, v)
	}
}

// wantFree fails unless Get reports key free. Expired records may remain
// for GetValue; wantAbsent checks that nothing is stored at all.
func (e *env) wantFree(key string) {
	e.t.Helper()
	got, ok, err := e.key.Get(e.ctx, key)
	if err != nil || ok {
		e.t.Fatalf("Get(%q) = %+v, %v, %v; want free", key, got, ok, err)
	}
}

// wantAbsent fails unless nothing at all is stored under key.
func (e *env) wantAbsent(key string) {
	e.t.Helper()
	e.wantFree(key)
	got, ok, err := e.key.GetValue(e.ctx, key)
	if err != nil || ok {
		e.t.Fatalf("GetValue(%q) = %+v, %v, %v; want nothing stored", key, got, ok, err)
	}
}

func wantBool(t *testing.T, what string, got bool, err error, want bool) {
	t.Helper()
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	if got != want {
		t.Fatalf("%s = %v, want %v", what, got, want)
	}
}

// wantCode fails unless err is a *factum.Error of the code that also
// matches its sentinel.
func wantCode(t *testing.T, what string, err error, code factum.Code) {
	t.Helper()
	if m := kit.CodeMismatch(err, code); m != nil {
		t.Fatalf("%s: %v", what, m)
	}
}
