package postgres_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/internal/servicetest"
	"github.com/factum-go/factum/postgres"
	"github.com/factum-go/factum/query"
	"github.com/factum-go/factum/snapshot"
	"github.com/factum-go/factum/snapshot/snapshottest"
)

// openSnapshotDB opens a fresh schema, dropped at cleanup.
func openSnapshotDB(t testing.TB) *postgres.DB {
	t.Helper()
	url, schema := servicetest.PostgresSchema(t)
	db, err := postgres.Open(context.Background(), url, postgres.Options{Schema: schema})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(db.Close)
	return db
}

func newSnapshotStore(t testing.TB, db *postgres.DB, boundedContext string) *postgres.SnapshotStore {
	t.Helper()
	st, err := postgres.NewSnapshotStore(context.Background(), db, boundedContext)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

func TestSnapshotStoreContract(t *testing.T) {
	st := newSnapshotStore(t, openSnapshotDB(t), "kit")
	snapshottest.Run(t, func(*testing.T) snapshot.Store { return st })
}

// TestSnapshotStoreContextNames serves contexts whose table names need
// quoting (PostgreSQL folds unquoted capitals), and keeps two contexts
// sharing the schema apart.
func TestSnapshotStoreContextNames(t *testing.T) {
	db := openSnapshotDB(t)
	ctx := context.Background()
	for _, c := range []string{"my-shop.v2", "Billing", "billing"} {
		st := newSnapshotStore(t, db, c)
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

// TestSnapshotStoreRefusesTextPostgresCannotHold: invalid UTF-8, NUL bytes
// and a \u0000 escape (which jsonb cannot hold) are IllegalArgument, and
// nothing is stored.
func TestSnapshotStoreRefusesTextPostgresCannotHold(t *testing.T) {
	st := newSnapshotStore(t, openSnapshotDB(t), "shop")
	ctx := context.Background()
	id := factum.NamedAggregate{Context: "shop", Aggregate: "cart"}.WithID("c-1")
	for name, mutate := range map[string]func(*snapshot.Snapshot){
		"invalid UTF-8 operator": func(s *snapshot.Snapshot) { s.Operator = "\xff" },
		"NUL in the owner":       func(s *snapshot.Snapshot) { s.OwnerID = "a\x00b" },
		"NUL in the event ID":    func(s *snapshot.Snapshot) { s.EventID = "e\x00" },
		"invalid UTF-8 state":    func(s *snapshot.Snapshot) { s.State = json.RawMessage("\"\xff\"") },
		"escaped NUL in state":   func(s *snapshot.Snapshot) { s.State = json.RawMessage(`{"text":"a\u0000b"}`) },
	} {
		s := snapshot.Snapshot{AggregateID: id, Version: 1, State: json.RawMessage(`{}`)}
		mutate(&s)
		saved, err := st.Save(ctx, s)
		if !errors.Is(err, factum.ErrIllegalArgument) || saved {
			t.Errorf("%s: %v, %v; want IllegalArgument", name, saved, err)
		}
	}
	if _, err := st.Load(ctx, id); !errors.Is(err, factum.ErrNotFound) {
		t.Fatalf("refused snapshots were stored: %v", err)
	}
}
