package postgres_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/factum-go/factum/internal/pgserver"
	"github.com/factum-go/factum/internal/sqlstore/sqlstoretest"
	"github.com/factum-go/factum/postgres"
	"pgregory.net/rapid"
)

// The PostgreSQL event store, prepare backend and idempotency store
// against their models, a fresh schema per run on a private server: the
// log's visibility horizon is server-wide, and no other test's open
// transaction may hold it back here.
func TestAgainstModels(t *testing.T) {
	pg := pgserver.Start(t)
	var n atomic.Int64
	sqlstoretest.CheckModels(t, 20, func(rt *rapid.T) sqlstoretest.ModelDB {
		ctx := context.Background()
		db, err := postgres.Open(ctx, pg.URL("postgres"), postgres.Options{Schema: fmt.Sprintf("model_%d", n.Add(1)), MaxConns: 8})
		if err != nil {
			rt.Fatal(err)
		}
		return sqlstoretest.ModelDBOf(ctx, db, postgres.NewEventStore, postgres.NewPrepareBackend, postgres.NewIdempotencyStore, func() error { db.Close(); return nil })
	})
}
