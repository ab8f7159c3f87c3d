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
	"github.com/factum-go/factum/idempotency"
	"github.com/factum-go/factum/idempotency/idempotencymodel"
	"github.com/factum-go/factum/internal/rapidruns"
	"github.com/factum-go/factum/prepare"
	"github.com/factum-go/factum/prepare/preparemodel"
	"github.com/factum-go/factum/sqlite"
	"pgregory.net/rapid"
)

// The SQLite event store against the model, a fresh database per run.
func TestEventStoreAgainstModel(t *testing.T) {
	rapidruns.Limit(t, 30)
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

// modelDB opens a fresh database in dir for one rapid run.
func modelDB(rt *rapid.T, dir string, n *atomic.Int64) *sqlite.DB {
	db, err := sqlite.Open(context.Background(), filepath.Join(dir, fmt.Sprintf("model-%d.db", n.Add(1))), sqlite.Options{Synchronous: "NORMAL"})
	if err != nil {
		rt.Fatal(err)
	}
	return db
}

// The SQLite prepare backend against the model.
func TestPrepareAgainstModel(t *testing.T) {
	rapidruns.Limit(t, 30)
	dir := t.TempDir()
	var n atomic.Int64
	preparemodel.Check(t, func(rt *rapid.T) (prepare.Backend, func()) {
		db := modelDB(rt, dir, &n)
		b, err := sqlite.NewPrepareBackend(context.Background(), db, sqlite.PrepareOptions{})
		if err != nil {
			db.Close()
			rt.Fatal(err)
		}
		return b, func() { db.Close() }
	})
}

// The SQLite idempotency store against the model.
func TestIdempotencyAgainstModel(t *testing.T) {
	rapidruns.Limit(t, 30)
	dir := t.TempDir()
	var n atomic.Int64
	idempotencymodel.Check(t, func(rt *rapid.T) (idempotency.Store, func()) {
		db := modelDB(rt, dir, &n)
		s, err := sqlite.NewIdempotencyStore(context.Background(), db, sqlite.IdempotencyOptions{})
		if err != nil {
			db.Close()
			rt.Fatal(err)
		}
		return s, func() { db.Close() }
	})
}
