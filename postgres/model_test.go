package postgres_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/factum-go/factum/eventstore"
	"github.com/factum-go/factum/eventstore/eventstoremodel"
	"github.com/factum-go/factum/internal/pgserver"
	"github.com/factum-go/factum/postgres"
	"pgregory.net/rapid"
)

// The PostgreSQL event store against the model, a fresh schema per run on
// a private server: the log's visibility horizon is server-wide, and no
// other test's open transaction may hold it back here.
func TestEventStoreAgainstModel(t *testing.T) {
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
