package sqlite_test

import (
	"context"
	"fmt"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/factum-go/factum/internal/sqlstore/sqlstoretest"
	"github.com/factum-go/factum/sqlite"
	"pgregory.net/rapid"
)

// The SQLite event store, prepare backend and idempotency store against
// their models, a fresh database file per run.
func TestAgainstModels(t *testing.T) {
	dir := t.TempDir()
	var n atomic.Int64
	sqlstoretest.CheckModels(t, 30, func(rt *rapid.T) sqlstoretest.ModelDB {
		ctx := context.Background()
		db, err := sqlite.Open(ctx, filepath.Join(dir, fmt.Sprintf("model-%d.db", n.Add(1))), sqlite.Options{Synchronous: "NORMAL"})
		if err != nil {
			rt.Fatal(err)
		}
		return sqlstoretest.ModelDBOf(ctx, db, sqlite.NewEventStore, sqlite.NewPrepareBackend, sqlite.NewIdempotencyStore, db.Close)
	})
}
