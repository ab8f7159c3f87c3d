package sqlite_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/factum-go/factum/event/leasetest"
	"github.com/factum-go/factum/sqlite"
)

func TestLeaseStoreContract(t *testing.T) {
	leasetest.Run(t, func(t *testing.T) leasetest.Store {
		db, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "factum.db"), sqlite.Options{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		st, err := sqlite.NewCheckpointStore(context.Background(), db, "shop")
		if err != nil {
			t.Fatal(err)
		}
		return st
	})
}
