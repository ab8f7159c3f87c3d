package aggregate_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/aggregate"
	"github.com/factum-go/factum/codec"
	"github.com/factum-go/factum/eventstore"
)

// trace is a log of middleware calls, safe for concurrent use.
type trace struct {
	mu    sync.Mutex
	calls []string
	sigs  []factum.Signal
}

func (tr *trace) add(s string) {
	tr.mu.Lock()
	tr.calls = append(tr.calls, s)
	tr.mu.Unlock()
}

// mw returns a middleware that logs "name>" before and "<name" after the
// command, and the signal it saw.
func (tr *trace) mw(name string) aggregate.Middleware {
	return func(named factum.NamedAggregate, next aggregate.CommandFunc) aggregate.CommandFunc {
		return func(ctx context.Context, cmd *factum.Command) factum.Signal {
			tr.add(name + ">" + named.Aggregate + "/" + cmd.Name)
			sig := next(ctx, cmd)
			tr.mu.Lock()
			tr.calls = append(tr.calls, "<"+name)
			tr.sigs = append(tr.sigs, sig)
			tr.mu.Unlock()
			return sig
		}
	}
}

func (tr *trace) snapshot() ([]string, []factum.Signal) {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	return slices.Clone(tr.calls), slices.Clone(tr.sigs)
}

type note struct{ N int }
type noted struct{ N int }

// notes makes a definition of "bank/notes" with the given middleware.
func notes(mw ...aggregate.Middleware) *aggregate.Definition[acct] {
	return aggregate.New[acct]("bank", "notes",
		aggregate.Source(func(a *acct, e noted) { a.Balance += e.N }),
		aggregate.Handle(func(_ context.Context, _ acct, n note) ([]any, error) {
			return []any{noted(n)}, nil
		}, aggregate.AllowCreate()),
		aggregate.WithMiddleware[acct](mw...),
	)
}

// The engine's middleware (ExecutorConfig.Middleware) wraps the
// definition's, the first of each list outermost; a definition's
// middleware sees only its own type's commands; and every middleware sees
// the final signal.
func TestMiddlewareOrderAndScope(t *testing.T) {
	tr := &trace{}
	notesType := notes(tr.mw("d1"), tr.mw("d2"))
	reg, err := aggregate.NewRegistry(accounts, notesType)
	if err != nil {
		t.Fatal(err)
	}
	p, err := reg.NewExecutor(aggregate.ExecutorConfig{
		Store: eventstore.NewMemory(), Codec: codec.NewRegistry(),
		Middleware: []aggregate.Middleware{tr.mw("e1"), tr.mw("e2")},
	})
	if err != nil {
		t.Fatal(err)
	}
	if sig := send(p, notesType.ID("n-1"), note{N: 1}); !sig.Succeeded() {
		t.Fatalf("%+v", sig)
	}
	if sig := send(p, accounts.ID("a-1"), deposit{Amount: 1}); !sig.Succeeded() {
		t.Fatalf("%+v", sig)
	}
	calls, sigs := tr.snapshot()
	want := []string{
		"e1>notes/note", "e2>notes/note", "d1>notes/note", "d2>notes/note", "<d2", "<d1", "<e2", "<e1",
		"e1>acct/deposit", "e2>acct/deposit", "<e2", "<e1",
	}
	if !slices.Equal(calls, want) {
		t.Fatalf("calls\n%v\nwant\n%v", calls, want)
	}
	for i, s := range sigs {
		if !s.Succeeded() || s.AggregateVersion != 1 || s.Stage != factum.StageProcessed {
			t.Fatalf("signal %d seen by a middleware: %+v", i, s)
		}
	}
}

// A user middleware sees every command once, with its final signal, even
// when the default Retry runs it several times under it; a rejection
// reaches it as a failed signal.
func TestMiddlewareSeesEachCommandOnceAcrossRetries(t *testing.T) {
	tr := &trace{}
	store := &faultyStore{Store: eventstore.NewMemory(), fail: func(n int) (error, bool) {
		if n <= 2 {
			return factum.NewError(factum.CodeEventVersionConflict, "injected"), false
		}
		return nil, false
	}}
	p := newProc(t, store, aggregate.ExecutorConfig{Backoff: time.Microsecond, Middleware: []aggregate.Middleware{tr.mw("user")}})
	if sig := send(p, accounts.ID("a-1"), deposit{Amount: 1}); !sig.Succeeded() || sig.AggregateVersion != 1 {
		t.Fatalf("%+v", sig)
	}
	if store.count() != 3 {
		t.Fatalf("%d appends, want 3 (two conflicts retried)", store.count())
	}
	c := factum.NewCommand(accounts.ID("a-1"), "nope")
	c.Name, c.AggregateID.Tenant = "nope", factum.DefaultTenant
	if sig := p.Process(context.Background(), &c); sig.Code != factum.CodeIllegalArgument {
		t.Fatalf("%+v", sig)
	}
	calls, sigs := tr.snapshot()
	if want := []string{"user>acct/deposit", "<user", "user>acct/nope", "<user"}; !slices.Equal(calls, want) {
		t.Fatalf("calls %v, want %v", calls, want)
	}
	if !sigs[0].Succeeded() || sigs[1].Code != factum.CodeIllegalArgument {
		t.Fatalf("signals seen: %+v", sigs)
	}
}

// Negative Retries installs no retry: a conflict fails the command at
// once with the conflict's code.
func TestNoRetries(t *testing.T) {
	store := &faultyStore{Store: eventstore.NewMemory(), fail: func(int) (error, bool) {
		return factum.NewError(factum.CodeEventVersionConflict, "injected"), false
	}}
	p := newProc(t, store, aggregate.ExecutorConfig{Retries: -1})
	if sig := send(p, accounts.ID("a-1"), deposit{Amount: 1}); sig.Code != factum.CodeEventVersionConflict || store.count() != 1 {
		t.Fatalf("%+v after %d appends, want one failed append", sig, store.count())
	}
}

// Retry used as a user middleware composes: a definition that retries
// more than the default settles more conflicts.
func TestRetryComposes(t *testing.T) {
	store := &faultyStore{Store: eventstore.NewMemory(), fail: func(n int) (error, bool) {
		if n <= 6 {
			return factum.NewError(factum.CodeEventVersionConflict, "injected"), false
		}
		return nil, false
	}}
	def := notes(aggregate.Retry(aggregate.RetryConfig{Retries: 2, Backoff: time.Microsecond}))
	// The default Retry under it makes 4 attempts for each of its 3.
	p, err := def.NewExecutor(aggregate.ExecutorConfig{Store: store, Codec: codec.NewRegistry(), Backoff: time.Microsecond})
	if err != nil {
		t.Fatal(err)
	}
	if sig := send(p, def.ID("n-1"), note{N: 1}); !sig.Succeeded() || store.count() != 7 {
		t.Fatalf("%+v after %d appends, want success after 7", sig, store.count())
	}
}

// When the context ends while Retry waits, the command fails at once
// with the conflict (joined with the context's error), not after the wait.
func TestRetryStopsWithTheContext(t *testing.T) {
	store := &faultyStore{Store: eventstore.NewMemory(), fail: func(int) (error, bool) {
		return factum.NewError(factum.CodeEventVersionConflict, "injected"), false
	}}
	p := newProc(t, store, aggregate.ExecutorConfig{Backoff: time.Hour})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	c := factum.NewCommand(accounts.ID("a-1"), deposit{Amount: 1})
	c.AllowCreate, c.AggregateID.Tenant = true, factum.DefaultTenant
	began := time.Now()
	sig := p.Process(ctx, &c)
	if took := time.Since(began); took > 10*time.Second {
		t.Fatalf("took %v: the wait did not end with the context", took)
	}
	if sig.Code != factum.CodeEventVersionConflict || store.count() != 1 || sig.CommandID != c.ID || sig.SignalTime.IsZero() {
		t.Fatalf("%+v after %d appends", sig, store.count())
	}
}

func contains(s, sub string) bool {
	for i := 0; i+len(sub) <= len(s); i++ {
		if s[i:i+len(sub)] == sub {
			return true
		}
	}
	return false
}

// The default Recover turns a sourcing function's panic into an
// InternalServerError signal for that command, which a user middleware
// sees as a signal; the processor goes on serving, and the state the panic
// left is not reused: the next command loads the aggregate.
func TestDefaultRecoverTurnsAPanicIntoAFailedSignal(t *testing.T) {
	var panics atomic.Int32
	def := aggregate.New[acct]("bank", "fragile",
		aggregate.Source(func(a *acct, e noted) {
			if e.N == 13 && panics.Add(1) == 1 {
				panic("unlucky")
			}
			a.Balance += e.N
		}),
		aggregate.Handle(func(_ context.Context, a acct, n note) ([]any, error) {
			if n.N == 0 {
				return nil, factum.IllegalArgument(fmt.Sprintf("balance %d", a.Balance))
			}
			return []any{noted(n)}, nil
		}, aggregate.AllowCreate()),
	)
	tr := &trace{}
	p, err := def.NewExecutor(aggregate.ExecutorConfig{Store: eventstore.NewMemory(), Codec: codec.NewRegistry(),
		Middleware: []aggregate.Middleware{tr.mw("user")}})
	if err != nil {
		t.Fatal(err)
	}
	id := def.ID("f-1")
	sig := send(p, id, note{N: 13})
	if sig.Code != factum.CodeInternalServerError || !contains(sig.Message, "panicked") || sig.CommandID == "" || sig.Function.Processor != "fragile" {
		t.Fatalf("%+v", sig)
	}
	// The stream was appended before the state panicked: the next command
	// loads it and decides on balance 13.
	sig = send(p, id, note{N: 0})
	if sig.Code != factum.CodeIllegalArgument || !contains(sig.Message, "balance 13") {
		t.Fatalf("%+v, want a rejection on the reloaded balance 13", sig)
	}
	if _, sigs := tr.snapshot(); len(sigs) != 2 || sigs[0].Code != factum.CodeInternalServerError {
		t.Fatalf("middleware saw %+v", sigs)
	}
}

// A nil middleware is a definition mistake, and a nil engine middleware
// is refused by NewExecutor.
func TestNilMiddleware(t *testing.T) {
	if err := notes(nil).Err(); factum.CodeOf(err) != factum.CodeIllegalArgument {
		t.Fatalf("definition error %v", err)
	}
	_, err := accounts.NewExecutor(aggregate.ExecutorConfig{Store: eventstore.NewMemory(), Codec: codec.NewRegistry(), Middleware: []aggregate.Middleware{nil}})
	if factum.CodeOf(err) != factum.CodeIllegalArgument {
		t.Fatalf("NewExecutor error %v", err)
	}
}

// flakyLoads fails its first loads (as many as fails says) with a
// transient error.
type flakyLoads struct {
	eventstore.Store
	fails, loads atomic.Int32
}

func (s *flakyLoads) Load(ctx context.Context, id factum.AggregateID, from, to int) ([]factum.EventStream, error) {
	if s.loads.Add(1) <= s.fails.Load() {
		return nil, sqlStateError("40001")
	}
	return s.Store.Load(ctx, id, from, to)
}

// A transient failure to load the aggregate is retried for a command with
// an expected version too: nothing was appended, so nothing stands in the
// way.
func TestTransientLoadIsRetriedWithAnExpectedVersion(t *testing.T) {
	mem := eventstore.NewMemory()
	id := accounts.ID("a-1")
	if sig := send(newProc(t, mem, aggregate.ExecutorConfig{}), id, deposit{Amount: 1}); !sig.Succeeded() {
		t.Fatalf("%+v", sig)
	}
	store := &flakyLoads{Store: mem}
	store.fails.Store(2)
	p := newProc(t, store, aggregate.ExecutorConfig{Backoff: time.Microsecond})
	c := factum.NewCommand(id, deposit{Amount: 1}).WithExpectedVersion(1)
	c.AggregateID.Tenant = factum.DefaultTenant
	if sig := p.Process(context.Background(), &c); !sig.Succeeded() || sig.AggregateVersion != 2 || store.loads.Load() != 3 {
		t.Fatalf("%+v after %d loads, want success after 3", sig, store.loads.Load())
	}
}
