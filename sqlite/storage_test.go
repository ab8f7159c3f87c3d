package sqlite_test

import (
	"context"
	"errors"
	"path/filepath"
	"testing"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/engine/storagetest"
	"github.com/factum-go/factum/sqlite"
)

func TestStorageContract(t *testing.T) {
	storagetest.Run(t, func(t *testing.T) (storagetest.Storage, func()) {
		db, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "factum.db"))
		if err != nil {
			t.Fatal(err)
		}
		return db, func() { _ = db.Close() }
	})
}

// DB.Close closes the stores the DB made: an append after it fails.
func TestDBCloseClosesItsStores(t *testing.T) {
	ctx := context.Background()
	db, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "factum.db"))
	if err != nil {
		t.Fatal(err)
	}
	es, err := db.EventStore(ctx, "alpha")
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	s := factum.EventStream{ID: factum.NewID(), AggregateID: factum.NamedAggregate{Context: "alpha", Aggregate: "tally"}.WithID("t1"), Version: 1,
		CommandID: factum.NewID(), RequestID: "r-1", Events: []factum.DomainEvent{{ID: factum.NewID(), Name: "bumped", Sequence: 1, IsLast: true, Body: []byte(`{}`)}}}
	if err := es.Append(ctx, &s); !errors.Is(err, sqlite.ErrEventStoreClosed) || !errors.Is(err, factum.ErrClosed) {
		t.Fatalf("Append after DB.Close: %v, want ErrEventStoreClosed, a factum.ErrClosed", err)
	}
}

func TestOpenTakesAtMostOneOptions(t *testing.T) {
	_, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "x.db"), sqlite.Options{}, sqlite.Options{})
	if factum.CodeOf(err) != factum.CodeIllegalArgument {
		t.Fatalf("Open with two Options: %v, want IllegalArgument", err)
	}
}
