package postgres_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/internal/servicetest"
	"github.com/factum-go/factum/internal/sqlstore/sqlstoretest"
	"github.com/factum-go/factum/postgres"
	"github.com/factum-go/factum/snapshot"
)

// openSnapshotDB opens a fresh schema, dropped at cleanup.
func openSnapshotDB(t testing.TB) *postgres.DB {
	url, schema := servicetest.PostgresSchema(t)
	db := sqlstoretest.Must(postgres.Open(context.Background(), url, postgres.Options{Schema: schema}))(t)
	t.Cleanup(db.Close)
	return db
}

func newSnapshotStore(t testing.TB, db *postgres.DB, boundedContext string) *postgres.SnapshotStore {
	return sqlstoretest.Must(postgres.NewSnapshotStore(context.Background(), db, boundedContext))(t)
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
