package sqlite_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/factum-go/factum/eventstore"
	"github.com/factum-go/factum/eventstore/eventstoremodel"
	"github.com/factum-go/factum/sqlite"
	"pgregory.net/rapid"
)

// The SQLite event store against the model, a fresh database per run.
func TestEventStoreAgainstModel(t *testing.T) {
	dir := t.TempDir()
	var n atomic.Int64
	eventstoremodel.Check(t, func(rt *rapid.T) (eventstore.Store, func()) {
		ctx := context.Background()
		db, err := sqlite.Open(ctx, filepath.Join(dir, fmt.Sprintf("model-%d.db", n.Add(1))), sqlite.Options{Synchronous: "NORMAL"})
		if err != nil {
			rt.Fatal(err)
		}
		st, err := sqlite.NewEventStore(ctx, db, eventstoremodel.Aggregate.Context, sqlite.EventStoreOptions{})
		if err != nil {
			db.Close()
			rt.Fatal(err)
		}
		return st, func() {
			if err := errors.Join(st.Close(), db.Close()); err != nil {
				rt.Error(err)
			}
		}
	})
}
