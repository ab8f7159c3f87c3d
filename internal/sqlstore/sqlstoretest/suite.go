package sqlstoretest

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/engine/storagetest"
	"github.com/factum-go/factum/event"
	"github.com/factum-go/factum/event/checkpointtest"
	"github.com/factum-go/factum/event/consumertest"
	"github.com/factum-go/factum/event/leasetest"
	"github.com/factum-go/factum/eventstore"
	"github.com/factum-go/factum/idempotency"
	"github.com/factum-go/factum/internal/enginetest"
	"github.com/factum-go/factum/projection"
	"github.com/factum-go/factum/projection/projectiontest"
	"github.com/factum-go/factum/query"
	"github.com/factum-go/factum/snapshot"
	"github.com/factum-go/factum/snapshot/snapshottest"
)

// EventStore is a backend's event store.
type EventStore interface {
	eventstore.Store
	Context() string
	Close() error
}

// CheckpointStore is a backend's checkpoint store, which holds the leases
// too.
type CheckpointStore interface {
	event.CheckpointStore
	event.LeaseStore
}

// Stores makes the stores of one open database. Their errors are the
// constructors'; the suite closes the event stores it makes.
type Stores struct {
	// Events makes an event store; single turns coalescing off (one
	// append per statement or transaction).
	Events      func(boundedContext string, single bool) (EventStore, error)
	Snapshots   func(boundedContext string) (snapshot.QueryStore, error)
	Checkpoints func(boundedContext string) (CheckpointStore, error)
	Projections func(boundedContext string) (projection.Store, error)
	// Idempotency makes an idempotency store whose tables start with
	// prefix ("" for the default).
	Idempotency func(prefix string, p idempotency.Policy) (idempotency.Store, error)
	// Exec runs a statement on the database.
	Exec func(ctx context.Context, sql string) error
	// Reopen opens the same database again, with connections of its own
	// (as another process would), closed at t's cleanup.
	Reopen func(t testing.TB) Stores
}

// Backend is one dialect's database under test.
type Backend struct {
	// Open opens a fresh, empty database, closed at t's cleanup.
	Open func(t testing.TB) Stores
	// Storage opens a fresh, empty database as a storage handle (the DB
	// itself), with the function that closes it.
	Storage storagetest.Open
	// NilDB makes the stores of a nil DB, each of which its constructor
	// refuses.
	NilDB Stores
	// ErrClosed is the error of an append after Close.
	ErrClosed error
	// BadPrefixes are table prefixes of the idempotency store that only
	// this backend refuses.
	BadPrefixes []string
	// FoldsCase says table names ignore letter case, so contexts that
	// differ only in case cannot share a database.
	FoldsCase bool
}

// Run runs the shared tests of the backend.
func Run(t *testing.T, b Backend) {
	t.Run("EventStoreContract", b.eventStoreContract)
	t.Run("EventStoreRefusesOtherContexts", b.eventStoreRefusesOtherContexts)
	t.Run("EventStoreRefusesInvalidUTF8", b.eventStoreRefusesInvalidUTF8)
	t.Run("EventStoreContextsShareADatabase", b.eventStoreContextsShareADatabase)
	t.Run("EventStoreClose", b.eventStoreClose)
	t.Run("SnapshotStoreContract", func(t *testing.T) {
		st := Must(b.Open(t).Snapshots("kit"))(t)
		snapshottest.Run(t, func(*testing.T) snapshot.Store { return st })
	})
	t.Run("SnapshotStoreContextNames", b.snapshotStoreContextNames)
	t.Run("SnapshotStoreBatches", b.snapshotStoreBatches)
	t.Run("CheckpointStoreContract", func(t *testing.T) {
		stores := b.Open(t)
		checkpointtest.Run(t, func(t *testing.T) event.CheckpointStore { return Must(stores.Checkpoints("shop"))(t) })
	})
	t.Run("CheckpointStorePersists", b.checkpointStorePersists)
	t.Run("LeaseStoreContract", func(t *testing.T) {
		leasetest.Run(t, func(t *testing.T) leasetest.Store { return Must(b.Open(t).Checkpoints("shop"))(t) })
	})
	t.Run("ProjectionStoreContract", func(t *testing.T) {
		projectiontest.Run(t, func(t *testing.T) projection.Store { return Must(b.Open(t).Projections("shop"))(t) })
	})
	t.Run("ConsumerContract", func(t *testing.T) { consumertest.Run(t, b.consumerSetup(false)) })
	// Consumers holding their group's lease in the database, as instances
	// sharing it run them: the plain contract, and one at a time.
	t.Run("LeasedConsumerContract", func(t *testing.T) {
		consumertest.Run(t, b.consumerSetup(true))
		consumertest.RunLeased(t, b.consumerSetup(true))
	})
	t.Run("Engine", b.engine)
	t.Run("IdempotencyOptions", b.idempotencyOptions)
	t.Run("NilDBRefused", b.nilDBRefused)
	t.Run("StorageContract", func(t *testing.T) { storagetest.Run(t, b.Storage) })
	t.Run("StorageClosesItsStores", b.storageClosesItsStores)
}

// Must returns v, or rather a function that returns it and fails t with
// err if there is one: Must(f())(t).
func Must[T any](v T, err error) func(t testing.TB) T {
	return func(t testing.TB) T {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
}

// Closed is Must for what must be closed: it also closes v at t's cleanup,
// failing t if that fails.
func Closed[T interface{ Close() error }](v T, err error) func(t testing.TB) T {
	return func(t testing.TB) T {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			if err := v.Close(); err != nil {
				t.Errorf("close: %v", err)
			}
		})
		return v
	}
}

// Contexts whose table names need quoting are served, and contexts sharing
// the database are kept apart.
func (b Backend) snapshotStoreContextNames(t *testing.T) {
	stores := b.Open(t)
	ctx := context.Background()
	names := []string{"my-shop.v2", "Billing"}
	if !b.FoldsCase {
		names = append(names, "billing")
	}
	for _, c := range names {
		st := Must(stores.Snapshots(c))(t)
		named := factum.NamedAggregate{Context: c, Aggregate: "order"}
		if _, err := st.Save(ctx, snapshot.Snapshot{AggregateID: named.WithID("o-1"), Version: 1, State: json.RawMessage(`{"context":"` + c + `"}`)}); err != nil {
			t.Fatalf("%s: save: %v", c, err)
		}
		svc, err := snapshot.NewQueryService(st, named, query.Planner{})
		if err != nil {
			t.Fatal(err)
		}
		list, err := svc.List(ctx, query.Query{Condition: query.Eq("state.context", c)})
		if err != nil || len(list) != 1 {
			t.Fatalf("%s: list = %v, %v", c, list, err)
		}
		if n, err := svc.Count(ctx, query.All()); err != nil || n != 1 {
			t.Fatalf("%s: count = %d, %v", c, n, err)
		}
		other := factum.NamedAggregate{Context: "elsewhere", Aggregate: "order"}
		if _, err := st.Save(ctx, snapshot.Snapshot{AggregateID: other.WithID("o-1"), Version: 1, State: json.RawMessage(`{}`)}); !errors.Is(err, factum.ErrIllegalArgument) {
			t.Errorf("%s: save of another context: %v, want IllegalArgument", c, err)
		}
		if _, err := st.Load(ctx, other.WithID("o-1")); !errors.Is(err, factum.ErrIllegalArgument) {
			t.Errorf("%s: load of another context: %v, want IllegalArgument", c, err)
		}
		if _, err := st.Count(ctx, other, query.All()); !errors.Is(err, factum.ErrIllegalArgument) {
			t.Errorf("%s: count of another context: %v, want IllegalArgument", c, err)
		}
	}
}

// Checkpoints are read back through a new connection to the database, and
// two contexts sharing it are kept apart.
func (b Backend) checkpointStorePersists(t *testing.T) {
	ctx := context.Background()
	stores := b.Open(t)
	group := factum.Function{Context: "shop", Processor: "snapshotter"}
	want := map[string]factum.Position{"shop": {Tx: 900, Seq: 42}, "billing": {Tx: 800, Seq: 7}}
	for c, pos := range want {
		if err := Must(stores.Checkpoints(c))(t).SaveCheckpoint(ctx, group, pos); err != nil {
			t.Fatal(err)
		}
	}
	again := stores.Reopen(t)
	for c, pos := range want {
		if got, err := Must(again.Checkpoints(c))(t).Checkpoint(ctx, group); err != nil || got != pos {
			t.Errorf("%s through a new connection: %v, %v; want %s", c, got, err, pos)
		}
	}
}

func (b Backend) consumerSetup(leased bool) func(t *testing.T) consumertest.Setup {
	return func(t *testing.T) consumertest.Setup {
		ctx := context.Background()
		stores := b.Open(t)
		store := events(t, stores, "consumertest", false)
		checkpoints := Must(stores.Checkpoints("consumertest"))(t)
		return consumertest.Setup{Store: store, Start: func(p *event.Processor, f event.FailureRecorder, notify func(factum.Signal)) func() {
			cfg := event.Config{Log: store, Checkpoints: checkpoints, Failures: f, Notify: notify, Backoff: time.Millisecond}
			if leased {
				cfg.Leases, cfg.LeaseTTL = checkpoints, 300*time.Millisecond
			}
			c, err := event.NewConsumer(p, cfg)
			if err != nil {
				t.Fatal(err)
			}
			rctx, cancel := context.WithCancel(ctx)
			done := make(chan struct{})
			go func() { defer close(done); _ = c.Run(rctx) }()
			var once sync.Once
			stop := func() { once.Do(func() { cancel(); <-done }) }
			t.Cleanup(stop)
			return stop
		}}
	}
}

// engine runs the shared end-to-end checks (see package enginetest) with
// every store in one database, restarting on it with new connections.
func (b Backend) engine(t *testing.T) {
	first := b.Open(t)
	enginetest.CartService(t, func(t *testing.T) enginetest.Stores {
		t.Helper()
		stores := first.Reopen(t)
		events := Must(stores.Events("shop", false))(t)
		return enginetest.Stores{
			Events:      events,
			Snapshots:   Must(stores.Snapshots("shop"))(t),
			Checkpoints: Must(stores.Checkpoints("shop"))(t),
			Close:       events.Close,
		}
	})
}

// Bad options are refused before anything is created, and stores with
// different prefixes keep to their own tables.
func (b Backend) idempotencyOptions(t *testing.T) {
	stores := b.Open(t)
	ctx := context.Background()
	for _, prefix := range append([]string{"bad prefix", "x;DROP TABLE y", "1abc"}, b.BadPrefixes...) {
		if _, err := stores.Idempotency(prefix, idempotency.Policy{}); !errors.Is(err, factum.ErrIllegalArgument) {
			t.Errorf("prefix %q: %v, want IllegalArgument", prefix, err)
		}
	}
	for _, p := range []idempotency.Policy{{Lease: -time.Second}, {Retention: -time.Second}} {
		if _, err := stores.Idempotency("", p); !errors.Is(err, factum.ErrIllegalArgument) {
			t.Errorf("policy %+v: %v, want IllegalArgument", p, err)
		}
	}
	a := Must(stores.Idempotency("a_", idempotency.Policy{}))(t)
	c := Must(stores.Idempotency("b_", idempotency.Policy{}))(t)
	k := idempotency.Key{Tenant: "t", Operation: "op", Value: "v"}
	if _, created, err := a.Begin(ctx, k, "fp"); err != nil || !created {
		t.Fatal(created, err)
	}
	if _, created, err := c.Begin(ctx, k, "other"); err != nil || !created {
		t.Fatalf("store b_ saw store a_'s key: %v, %v", created, err)
	}
	// Opening again is a no-op for the migrations, and sees the key.
	again := Must(stores.Idempotency("a_", idempotency.Policy{}))(t)
	if rec, found, err := again.Get(ctx, k); err != nil || !found || rec.Fingerprint != "fp" {
		t.Fatalf("a_ opened again: %+v, %v, %v", rec, found, err)
	}
}

// Every constructor refuses a nil DB as IllegalArgument.
func (b Backend) nilDBRefused(t *testing.T) {
	for name, open := range map[string]func() error{
		"events":      func() error { _, err := b.NilDB.Events("shop", false); return err },
		"snapshots":   func() error { _, err := b.NilDB.Snapshots("shop"); return err },
		"checkpoints": func() error { _, err := b.NilDB.Checkpoints("shop"); return err },
		"projections": func() error { _, err := b.NilDB.Projections("shop"); return err },
		"idempotency": func() error { _, err := b.NilDB.Idempotency("", idempotency.Policy{}); return err },
	} {
		if err := open(); factum.CodeOf(err) != factum.CodeIllegalArgument {
			t.Errorf("%s on a nil DB: %v, want IllegalArgument", name, err)
		}
	}
}

// Closing the storage handle closes the stores it made: an append to one
// fails with ErrClosed.
func (b Backend) storageClosesItsStores(t *testing.T) {
	ctx := context.Background()
	s, closeS := b.Storage(t)
	es, err := s.EventStore(ctx, "shop")
	if err != nil {
		t.Fatal(err)
	}
	closeS()
	if err := es.Append(ctx, Stream(shopCart.WithID("c"), 1, "r-1")); !errors.Is(err, b.ErrClosed) || !errors.Is(err, factum.ErrClosed) {
		t.Fatalf("append after the handle's Close: %v, want %v, a factum.ErrClosed", err, b.ErrClosed)
	}
}
