package aggregate_test

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/aggregate"
	"github.com/factum-go/factum/codec"
	"github.com/factum-go/factum/eventstore"
)

// faultyStore fails appends as fail says: fail(n) for the n-th append
// (1-based) returns the error to give, and whether to append first (a
// write that committed although the caller got an error).
type faultyStore struct {
	eventstore.Store
	mu      sync.Mutex
	appends int
	fail    func(n int) (err error, commit bool)
}

func (s *faultyStore) Append(ctx context.Context, st *factum.EventStream) error {
	s.mu.Lock()
	s.appends++
	n := s.appends
	s.mu.Unlock()
	if s.fail != nil {
		if err, commit := s.fail(n); err != nil {
			if commit {
				if aerr := s.Store.Append(ctx, st); aerr != nil {
					return aerr
				}
			}
			return err
		}
	}
	return s.Store.Append(ctx, st)
}

func (s *faultyStore) count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.appends
}

// recorder is an effect that counts what the processor does with it.
type recorder struct {
	mu               sync.Mutex
	applies, undos   int
	applyErr         error
	alreadyInPlace   bool
	appliedAndUndone []string
}

func (r *recorder) Apply(context.Context) (bool, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.applies++
	if r.applyErr != nil {
		return false, r.applyErr
	}
	r.appliedAndUndone = append(r.appliedAndUndone, "apply")
	return !r.alreadyInPlace, nil
}

func (r *recorder) Undo(context.Context) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.undos++
	r.appliedAndUndone = append(r.appliedAndUndone, "undo")
	return nil
}

type reserve struct{}
type reserved struct{}

// bound is an aggregate whose handler binds the effects effs returns.
func bound(effs func() []aggregate.Effect) *aggregate.Definition[acct] {
	return aggregate.New[acct]("bank", "bound",
		aggregate.Emits[acct, reserved](),
		aggregate.Handle(func(ctx context.Context, _ acct, _ reserve) ([]any, error) {
			if err := aggregate.Bind(ctx, effs()...); err != nil {
				return nil, err
			}
			return []any{reserved{}}, nil
		}, aggregate.AllowCreate()),
	)
}

func TestBoundEffects(t *testing.T) {
	conflict := factum.NewError(factum.CodeEventVersionConflict, "injected conflict")
	refusal := factum.NewError(factum.CodeTenantMismatch, "injected refusal")
	unknown := errors.New("injected: connection state unknown")
	once := func(err error, commit bool) func(int) (error, bool) {
		return func(n int) (error, bool) {
			if n == 1 {
				return err, commit
			}
			return nil, false
		}
	}
	tests := []struct {
		name      string
		fail      func(int) (error, bool)
		inPlace   bool
		wantCode  factum.Code
		wantTrail []string // of the first effect
	}{
		{"appended: kept", nil, false, factum.CodeOk, []string{"apply"}},
		{"version conflict: undone, applied again, kept", once(conflict, false), false, factum.CodeOk, []string{"apply", "undo", "apply"}},
		{"refused by the store: undone", once(refusal, false), false, factum.CodeNotFound, []string{"apply", "undo"}}, // a tenant refusal reads as a missing aggregate
		{"unknown outcome, not appended: undone", once(unknown, false), false, factum.CodeInternalServerError, []string{"apply", "undo"}},
		{"unknown outcome, appended: kept", once(unknown, true), false, factum.CodeOk, []string{"apply"}},
		{"found in place and conflict: not undone", once(conflict, false), true, factum.CodeOk, []string{"apply", "apply"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := &recorder{alreadyInPlace: tt.inPlace}
			def := bound(func() []aggregate.Effect { return []aggregate.Effect{r} })
			store := &faultyStore{Store: eventstore.NewMemory(), fail: tt.fail}
			p, err := def.NewExecutor(aggregate.ExecutorConfig{Store: store, Codec: codec.NewRegistry()})
			if err != nil {
				t.Fatal(err)
			}
			sig := send(p, def.ID("b-1"), reserve{})
			if sig.Code != tt.wantCode {
				t.Fatalf("outcome %s (%s), want %s", sig.Code, sig.Message, tt.wantCode)
			}
			if got := r.appliedAndUndone; !equal(got, tt.wantTrail) {
				t.Fatalf("effect trail %v, want %v", got, tt.wantTrail)
			}
		})
	}
}

// An effect that refuses stops the command: nothing is appended and the
// effects applied before it are undone.
func TestRefusingEffectUndoesTheEarlierOnes(t *testing.T) {
	first := &recorder{}
	second := &recorder{applyErr: factum.IllegalState("key is taken")}
	def := bound(func() []aggregate.Effect { return []aggregate.Effect{first, second} })
	store := &faultyStore{Store: eventstore.NewMemory()}
	p, err := def.NewExecutor(aggregate.ExecutorConfig{Store: store, Codec: codec.NewRegistry()})
	if err != nil {
		t.Fatal(err)
	}
	sig := send(p, def.ID("b-1"), reserve{})
	if sig.Code != factum.CodeIllegalState || sig.Message != "key is taken" {
		t.Fatalf("outcome %s %q", sig.Code, sig.Message)
	}
	if store.count() != 0 || !equal(first.appliedAndUndone, []string{"apply", "undo"}) {
		t.Fatalf("%d appends, first effect %v", store.count(), first.appliedAndUndone)
	}
}

// A retried request whose first attempt was appended is answered with that
// attempt's outcome; what the retry applied is undone.
func TestDuplicateRequestUndoesTheRetrysEffects(t *testing.T) {
	ctx := context.Background()
	r := &recorder{}
	def := bound(func() []aggregate.Effect { return []aggregate.Effect{r} })
	mem := eventstore.NewMemory()
	p1, err := def.NewExecutor(aggregate.ExecutorConfig{Store: mem, Codec: codec.NewRegistry()})
	if err != nil {
		t.Fatal(err)
	}
	p2, err := def.NewExecutor(aggregate.ExecutorConfig{Store: mem, Codec: codec.NewRegistry()})
	if err != nil {
		t.Fatal(err)
	}
	id := def.ID("b-1").WithTenant(factum.DefaultTenant)
	warm := factum.NewCommand(id, reserve{})
	warm.AllowCreate = true
	if sig := p2.Process(ctx, &warm); !sig.Succeeded() { // p2 caches version 1
		t.Fatalf("%+v", sig)
	}
	first := factum.NewCommand(id, reserve{}).WithRequestID("r-1")
	first.AllowCreate = true
	if sig := p1.Process(ctx, &first); !sig.Succeeded() || sig.AggregateVersion != 2 {
		t.Fatalf("%+v", sig)
	}
	r.appliedAndUndone = nil
	again := factum.NewCommand(id, reserve{}).WithRequestID("r-1")
	again.AllowCreate = true
	sig := p2.Process(ctx, &again) // stale: decides at version 1
	if !sig.Succeeded() || !sig.Duplicate || sig.AggregateVersion != 2 {
		t.Fatalf("retry: %+v", sig)
	}
	if !equal(r.appliedAndUndone, []string{"apply", "undo"}) {
		t.Fatalf("effect trail %v", r.appliedAndUndone)
	}
}

func TestBindOutsideAHandler(t *testing.T) {
	if err := aggregate.Bind(context.Background(), &recorder{}); !errors.Is(err, factum.ErrIllegalState) {
		t.Fatalf("err = %v", err)
	}
}

func equal(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
