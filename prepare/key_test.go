package prepare_test

import (
	"context"
	"errors"
	"testing"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/prepare"
)

var errStorage = errors.New("storage unavailable")

// flaky is a backend without KeyChanger whose RollbackValue fails for one
// key, to drive the error paths the contract kit cannot reach on a healthy
// backend.
type flaky struct {
	prepare.Backend
	failKey string
}

func (f flaky) RollbackValue(ctx context.Context, name, key string, value []byte) (bool, error) {
	if key == f.failKey {
		return false, errStorage
	}
	return f.Backend.RollbackValue(ctx, name, key, value)
}

func newFlaky(t *testing.T, failKey string) *prepare.Key[string] {
	t.Helper()
	k, err := prepare.NewKey[string]("username", flaky{prepare.NewMemory(prepare.MemoryConfig{}), failKey})
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// When the second step of the two-step key change fails, the new key is
// released again and the failure is reported as such, not as ErrNotHeld.
func TestTwoStepChangeKeyReleasesNewKeyOnError(t *testing.T) {
	ctx := context.Background()
	k := newFlaky(t, "old")
	if ok, err := k.Prepare(ctx, "old", prepare.Forever("u-1")); !ok || err != nil {
		t.Fatal(ok, err)
	}
	ok, err := k.ChangeKey(ctx, "old", "u-1", "new", prepare.Forever("u-1"))
	if ok || !errors.Is(err, errStorage) || errors.Is(err, prepare.ErrNotHeld) {
		t.Fatalf("ChangeKey = %v, %v; want false and the storage error", ok, err)
	}
	if _, held, _ := k.Get(ctx, "new"); held {
		t.Fatal("the new key stayed reserved after the change failed")
	}
	if _, held, _ := k.Get(ctx, "old"); !held {
		t.Fatal("the old key was lost")
	}
}

// A failed release is joined to the function's error, never dropped.
func TestUsingPrepareJoinsReleaseError(t *testing.T) {
	ctx := context.Background()
	k := newFlaky(t, "alice")
	refused := factum.IllegalState("refused")
	_, err := prepare.UsingPrepare(ctx, k, "alice", prepare.Forever("u-1"), func(context.Context, bool) (int, error) {
		return 0, refused
	})
	if !errors.Is(err, refused) || !errors.Is(err, errStorage) {
		t.Fatalf("UsingPrepare = %v; want both the function's and the release's error", err)
	}
	if factum.CodeOf(err) != factum.CodeIllegalState {
		t.Fatalf("CodeOf = %s; want the function's code first", factum.CodeOf(err))
	}
}
