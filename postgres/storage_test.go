package postgres_test

import (
	"context"
	"errors"
	"testing"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/engine/storagetest"
	"github.com/factum-go/factum/internal/servicetest"
	"github.com/factum-go/factum/postgres"
)

func TestStorageContract(t *testing.T) {
	storagetest.Run(t, func(t *testing.T) (storagetest.Storage, func()) {
		url, schema := servicetest.PostgresSchema(t)
		db, err := postgres.Open(t.Context(), url, postgres.Options{Schema: schema})
		if err != nil {
			t.Fatal(err)
		}
		return db, db.Close
	})
}

// DB.Close closes the stores the DB made: an append after it fails.
func TestDBCloseClosesItsStores(t *testing.T) {
	ctx := context.Background()
	url, schema := servicetest.PostgresSchema(t)
	db, err := postgres.Open(ctx, url, postgres.Options{Schema: schema})
	if err != nil {
		t.Fatal(err)
	}
	es, err := db.EventStore(ctx, "alpha")
	if err != nil {
		t.Fatal(err)
	}
	db.Close()
	s := factum.EventStream{ID: factum.NewID(), AggregateID: factum.NamedAggregate{Context: "alpha", Aggregate: "tally"}.WithID("t1"), Version: 1,
		CommandID: factum.NewID(), RequestID: "r-1", Events: []factum.DomainEvent{{ID: factum.NewID(), Name: "bumped", Sequence: 1, IsLast: true, Body: []byte(`{}`)}}}
	if err := es.Append(ctx, &s); !errors.Is(err, postgres.ErrEventStoreClosed) || !errors.Is(err, factum.ErrClosed) {
		t.Fatalf("Append after DB.Close: %v, want ErrEventStoreClosed, a factum.ErrClosed", err)
	}
}

func TestOpenTakesAtMostOneOptions(t *testing.T) {
	_, err := postgres.Open(context.Background(), "postgres://127.0.0.1:1/x", postgres.Options{}, postgres.Options{})
	if factum.CodeOf(err) != factum.CodeIllegalArgument {
		t.Fatalf("Open with two Options: %v, want IllegalArgument", err)
	}
}
