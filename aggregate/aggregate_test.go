package aggregate_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/aggregate"
	"github.com/factum-go/factum/codec"
	"github.com/factum-go/factum/eventstore"
)

type acct struct{ Balance int }
type deposit struct{ Amount int }
type deposited struct{ Amount int }
type unregistered struct{}
type emitUnregistered struct{}

var accounts = aggregate.New[acct]("bank", "acct",
	aggregate.Source(func(a *acct, e deposited) { a.Balance += e.Amount }),
	aggregate.Handle(func(_ context.Context, _ acct, d deposit) ([]any, error) {
		return []any{deposited(d)}, nil
	}, aggregate.AllowCreate()),
	aggregate.Handle(func(context.Context, acct, emitUnregistered) ([]any, error) {
		return []any{unregistered{}}, nil
	}, aggregate.AllowCreate()),
)

// The pre-gates run in DESIGN order: each case breaks several gates at
// once and must get the code of the earliest.
func TestPreGateOrder(t *testing.T) {
	id := accounts.ID("a1")
	existing := aggregate.State[acct]{ID: id.WithTenant("t1"), Version: 3, OwnerID: "alice", Deleted: true}
	missing := aggregate.State[acct]{ID: id}
	cmd := func(body any, mod func(*factum.Command)) *factum.Command {
		c := factum.NewCommand(id.WithTenant("t1"), body)
		if mod != nil {
			mod(&c)
		}
		return &c
	}
	cases := []struct {
		name string
		st   aggregate.State[acct]
		cmd  *factum.Command
		want factum.Code
	}{
		{"other tenant before all, as if missing", existing, cmd("nope", func(c *factum.Command) {
			c.Name, c.ExpectedVersion, c.OwnerID, c.AggregateID.Tenant = "nope", 2, "bob", "t2"
		}), factum.CodeNotFound},
		{"other tenant's create: the ID is taken", existing, cmd(deposit{1}, func(c *factum.Command) {
			c.IsCreate, c.ExpectedVersion, c.AggregateID.Tenant = true, 2, "t2"
		}), factum.CodeDuplicateAggregateID},
		{"expected version before the rest", existing, cmd("nope", func(c *factum.Command) {
			c.Name, c.ExpectedVersion, c.OwnerID = "nope", 2, "bob"
		}), factum.CodeCommandExpectVersionConflict},
		{"not found before unknown command", missing, cmd("nope", func(c *factum.Command) { c.Name = "nope" }), factum.CodeNotFound},
		{"create of existing", existing, cmd(deposit{1}, func(c *factum.Command) { c.IsCreate = true }), factum.CodeDuplicateAggregateID},
		{"tenant before owner and deleted", existing, cmd(deposit{1}, func(c *factum.Command) { c.AggregateID.Tenant, c.OwnerID = "t2", "bob" }), factum.CodeNotFound},
		{"owner before deleted", existing, cmd(deposit{1}, func(c *factum.Command) { c.OwnerID = "bob" }), factum.CodeIllegalAccessOwnerAggregate},
		{"deleted before unknown command", existing, cmd("nope", func(c *factum.Command) { c.Name = "nope" }), factum.CodeIllegalAccessDeletedAggregate},
		{"unknown command", func() aggregate.State[acct] { s := existing; s.Deleted = false; return s }(), cmd("nope", func(c *factum.Command) { c.Name = "nope" }), factum.CodeIllegalArgument},
		{"owner blank is allowed", func() aggregate.State[acct] { s := existing; s.Deleted = false; return s }(), cmd(deposit{1}, nil), factum.CodeOk},
		{"bad body", func() aggregate.State[acct] { s := existing; s.Deleted = false; return s }(), cmd(deposit{1}, func(c *factum.Command) { c.Body = 42 }), factum.CodeIllegalArgument},
		{"json body", func() aggregate.State[acct] { s := existing; s.Deleted = false; return s }(), cmd(deposit{1}, func(c *factum.Command) { c.Body = json.RawMessage(`{"Amount":5}`) }), factum.CodeOk},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			st := c.st
			_, err := accounts.Decide(context.Background(), &st, c.cmd)
			if got := factum.CodeOf(err); got != c.want {
				t.Fatalf("code %s (%v), want %s", got, err, c.want)
			}
			if err != nil {
				var fe *factum.Error
				if !errors.As(err, &fe) || fe.CommandID != c.cmd.ID || fe.Aggregate.ID != id.ID {
					t.Fatalf("error %v does not name the command and aggregate", err)
				}
				if c.cmd.AggregateID.Tenant != "t1" && (fe.Version != 0 || fe.Aggregate.Tenant != c.cmd.AggregateID.Tenant) {
					t.Fatalf("error to another tenant %+v carries the aggregate's version or tenant", fe)
				}
			}
		})
	}
}

func TestDefinitionMistakes(t *testing.T) {
	bad := aggregate.New[acct]("bank", "bad name!",
		aggregate.Handle(func(context.Context, acct, deposit) ([]any, error) { return nil, nil }),
		aggregate.Handle(func(context.Context, acct, deposit) ([]any, error) { return nil, nil }),
	)
	if err := bad.Err(); !errors.Is(err, factum.ErrIllegalArgument) {
		t.Fatalf("Err() = %v", err)
	}
	if _, err := aggregate.NewRegistry(bad); err == nil {
		t.Fatal("a definition with mistakes registered")
	}
	if _, err := aggregate.NewRegistry(accounts, accounts); err == nil {
		t.Fatal("one type registered twice")
	}
}

func newProc(t *testing.T, store eventstore.Store, cfg aggregate.ExecutorConfig) aggregate.Executor {
	t.Helper()
	cfg.Store, cfg.Codec = store, codec.NewRegistry()
	p, err := accounts.NewExecutor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// send processes a command that may create its aggregate, in the default
// tenant, and returns its signal.
func send(p aggregate.Executor, id factum.AggregateID, body any) factum.Signal {
	c := factum.NewCommand(id, body)
	c.AllowCreate = true
	c.AggregateID.Tenant = factum.DefaultTenant
	return p.Process(context.Background(), &c)
}

// depositTimes deposits amount to id n times through p, one stream each.
func depositTimes(t *testing.T, p aggregate.Executor, id factum.AggregateID, n, amount int) {
	t.Helper()
	for range n {
		if sig := send(p, id, deposit{Amount: amount}); sig.Code != factum.CodeOk {
			t.Fatalf("deposit to %s: %+v", id.ID, sig)
		}
	}
}

// Two processors on one store (two instances): each one's cache goes
// stale, the append's version conflict makes it reload and retry.
func TestRetryAfterConflict(t *testing.T) {
	store := eventstore.NewMemory()
	p1, p2 := newProc(t, store, aggregate.ExecutorConfig{}), newProc(t, store, aggregate.ExecutorConfig{})
	id := accounts.ID("shared")
	for i, p := range []aggregate.Executor{p1, p2, p1, p2, p1} {
		sig := send(p, id, deposit{Amount: 1})
		if !sig.Succeeded() || sig.AggregateVersion != i+1 {
			t.Fatalf("command %d: %+v", i, sig)
		}
	}
	// With an expected version the conflict is not retried.
	send(p2, id, deposit{Amount: 1}) // p1's cache is now stale at 5, store at 6
	c := factum.NewCommand(id, deposit{Amount: 1}).WithExpectedVersion(5)
	c.AggregateID.Tenant = factum.DefaultTenant
	sig := p1.Process(context.Background(), &c)
	if sig.Code != factum.CodeCommandExpectVersionConflict {
		t.Fatalf("%+v", sig)
	}
	if s, _ := store.Load(context.Background(), id, 1, eventstore.MaxVersion); len(s) != 6 {
		t.Fatalf("%d streams", len(s))
	}
}

// Concurrent processors racing on one aggregate: retries settle every
// command, with no gap.
func TestConcurrentProcessorsRetry(t *testing.T) {
	store := eventstore.NewMemory()
	procs := []aggregate.Executor{
		newProc(t, store, aggregate.ExecutorConfig{Retries: 50}),
		newProc(t, store, aggregate.ExecutorConfig{Retries: 50}),
	}
	id := accounts.ID("race")
	var wg sync.WaitGroup
	var mu sync.Mutex
	seen := map[int]bool{}
	for i := range 40 {
		wg.Go(func() {
			sig := send(procs[i%2], id, deposit{Amount: 1})
			mu.Lock()
			defer mu.Unlock()
			if !sig.Succeeded() || seen[sig.AggregateVersion] {
				t.Errorf("%+v", sig)
			}
			seen[sig.AggregateVersion] = true
		})
	}
	wg.Wait()
	for v := 1; v <= 40; v++ {
		if !seen[v] {
			t.Fatalf("version %d missing", v)
		}
	}
}

type snapshots struct {
	calls int
	st    aggregate.StoredState
}

func (s *snapshots) LatestState(_ context.Context, id factum.AggregateID) (aggregate.StoredState, bool, error) {
	s.calls++
	if s.st.ID.ID != id.ID {
		return aggregate.StoredState{}, false, nil
	}
	return s.st, true, nil
}

// The snapshot hook is read before the tail, and only the tail is loaded.
func TestSnapshotHook(t *testing.T) {
	store := eventstore.NewMemory()
	id := accounts.ID("snap")
	plain := newProc(t, store, aggregate.ExecutorConfig{})
	depositTimes(t, plain, id, 3, 10)
	// The snapshot claims version 2 with a balance the streams never had,
	// so the result shows it was used: 1000 + stream 3's 10 + 5.
	snap := &snapshots{st: aggregate.StoredState{ID: id.WithTenant(factum.DefaultTenant), Version: 2, State: json.RawMessage(`{"Balance":1000}`)}}
	p := newProc(t, store, aggregate.ExecutorConfig{Snapshots: snap, CacheSize: -1})
	sig := send(p, id, deposit{Amount: 5})
	if !sig.Succeeded() || sig.AggregateVersion != 4 || snap.calls != 1 {
		t.Fatalf("%+v calls=%d", sig, snap.calls)
	}
	streams, _ := store.Load(context.Background(), id, 1, eventstore.MaxVersion)
	reg := codec.NewRegistry()
	if err := accounts.Register(reg); err != nil {
		t.Fatal(err)
	}
	st, err := accounts.Fold(reg, snap.st, streams[2:])
	if err != nil || string(st.State) != `{"Balance":1015}` || st.Version != 4 {
		t.Fatalf("fold from the snapshot: %s v%d %v", st.State, st.Version, err)
	}
	if _, err := accounts.Fold(reg, snap.st, streams[3:]); !errors.Is(err, factum.ErrSourcingVersionConflict) {
		t.Fatalf("fold with a gap: %v", err)
	}
}

func TestUnregisteredEventFailsCommand(t *testing.T) {
	p := newProc(t, eventstore.NewMemory(), aggregate.ExecutorConfig{})
	sig := send(p, accounts.ID("u"), emitUnregistered{})
	if sig.Code != factum.CodeInternalServerError {
		t.Fatalf("%+v", sig)
	}
}

// A small cache evicts but stays correct: evicted aggregates reload.
func TestSmallCache(t *testing.T) {
	p := newProc(t, eventstore.NewMemory(), aggregate.ExecutorConfig{CacheSize: 1})
	for round := 1; round <= 3; round++ {
		for i := range 100 {
			sig := send(p, accounts.ID(fmt.Sprint("c", i)), deposit{Amount: 1})
			if !sig.Succeeded() || sig.AggregateVersion != round {
				t.Fatalf("round %d aggregate %d: %+v", round, i, sig)
			}
		}
	}
}
