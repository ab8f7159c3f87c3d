package postgres_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/factum-go/factum/eventstore"
	"github.com/factum-go/factum/eventstore/eventstoremodel"
	"github.com/factum-go/factum/idempotency"
	"github.com/factum-go/factum/idempotency/idempotencymodel"
	"github.com/factum-go/factum/internal/pgserver"
	"github.com/factum-go/factum/internal/rapidruns"
	"github.com/factum-go/factum/postgres"
	"github.com/factum-go/factum/prepare"
	"github.com/factum-go/factum/prepare/preparemodel"
	"pgregory.net/rapid"
)

// The PostgreSQL event store against the model, a fresh schema per run on
// a private server: the log's visibility horizon is server-wide, and no
// other test's open transaction may hold it back here.
func TestEventStoreAgainstModel(t *testing.T) {
	rapidruns.Limit(t, 20)
	pg := pgserver.Start(t)
	url := pg.URL("postgres")
	var n atomic.Int64
	eventstoremodel.Check(t, func(rt *rapid.T) (eventstore.Store, func()) {
		ctx := context.Background()
		db, err := postgres.Open(ctx, url, postgres.Options{Schema: fmt.Sprintf("model_%d", n.Add(1)), MaxConns: 8})
		if err != nil {
			rt.Fatal(err)
		}
		st, err := postgres.NewEventStore(ctx, db, eventstoremodel.Aggregate.Context, postgres.EventStoreOptions{})
		if err != nil {
			db.Close()
			rt.Fatal(err)
		}
		return st, func() {
			if err := st.Close(); err != nil {
				rt.Error(err)
			}
			db.Close()
		}
	})
}

// modelDB opens a fresh schema on the private server for one rapid run.
func modelDB(rt *rapid.T, pg *pgserver.Server, n *atomic.Int64) *postgres.DB {
	db, err := postgres.Open(context.Background(), pg.URL("postgres"), postgres.Options{Schema: fmt.Sprintf("model_%d", n.Add(1)), MaxConns: 4})
	if err != nil {
		rt.Fatal(err)
	}
	return db
}

// The PostgreSQL prepare backend and idempotency store against their
// models.
func TestPrepareAndIdempotencyAgainstModels(t *testing.T) {
	rapidruns.Limit(t, 20)
	pg := pgserver.Start(t)
	var n atomic.Int64
	t.Run("prepare", func(t *testing.T) {
		preparemodel.Check(t, func(rt *rapid.T) (prepare.Backend, func()) {
			db := modelDB(rt, pg, &n)
			b, err := postgres.NewPrepareBackend(context.Background(), db, postgres.PrepareOptions{})
			if err != nil {
				db.Close()
				rt.Fatal(err)
			}
			return b, db.Close
		})
	})
	t.Run("idempotency", func(t *testing.T) {
		idempotencymodel.Check(t, func(rt *rapid.T) (idempotency.Store, func()) {
			db := modelDB(rt, pg, &n)
			s, err := postgres.NewIdempotencyStore(context.Background(), db, postgres.IdempotencyOptions{})
			if err != nil {
				db.Close()
				rt.Fatal(err)
			}
			return s, db.Close
		})
	})
}
