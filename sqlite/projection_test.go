package sqlite_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/factum-go/factum/projection"
	"github.com/factum-go/factum/projection/projectiontest"
	"github.com/factum-go/factum/sqlite"
)

func TestProjectionStoreContract(t *testing.T) {
	projectiontest.Run(t, func(t *testing.T) projection.Store {
		db, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "factum.db"), sqlite.Options{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		st, err := sqlite.NewProjectionStore(context.Background(), db, "shop")
		if err != nil {
			t.Fatal(err)
		}
		return st
	})
}
