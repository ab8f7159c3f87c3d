package postgres_test

import (
	"context"
	"testing"

	"github.com/factum-go/factum/internal/enginetest"
	"github.com/factum-go/factum/internal/servicetest"
	"github.com/factum-go/factum/postgres"
)

// TestRuntimeOnPostgres runs the shared end-to-end checks (see package
// runtimetest) with every store in one PostgreSQL schema, restarting on it
// with new connections.
func TestRuntimeOnPostgres(t *testing.T) {
	url, schema := servicetest.PostgresSchema(t)
	enginetest.CartService(t, func(t *testing.T) enginetest.Stores {
		t.Helper()
		ctx := context.Background()
		db, err := postgres.Open(ctx, url, postgres.Options{Schema: schema})
		if err != nil {
			t.Fatal(err)
		}
		events, err := postgres.NewEventStore(ctx, db, "shop", postgres.EventStoreOptions{})
		if err != nil {
			t.Fatal(err)
		}
		snapshots, err := postgres.NewSnapshotStore(ctx, db, "shop")
		if err != nil {
			t.Fatal(err)
		}
		checkpoints, err := postgres.NewCheckpointStore(ctx, db, "shop")
		if err != nil {
			t.Fatal(err)
		}
		return enginetest.Stores{Events: events, Snapshots: snapshots, Checkpoints: checkpoints, Close: func() error {
			err := events.Close()
			db.Close()
			return err
		}}
	})
}
