package sqlstoretest

import (
	"context"
	"errors"
	"testing"

	"github.com/factum-go/factum/eventstore"
	"github.com/factum-go/factum/eventstore/eventstoremodel"
	"github.com/factum-go/factum/idempotency"
	"github.com/factum-go/factum/idempotency/idempotencymodel"
	"github.com/factum-go/factum/internal/rapidruns"
	"github.com/factum-go/factum/prepare"
	"github.com/factum-go/factum/prepare/preparemodel"
	"pgregory.net/rapid"
)

// ModelDB is the fresh database of one model run: the makers of its
// stores, and its close.
type ModelDB struct {
	Events      func() (EventStore, error)
	Prepare     func() (prepare.Backend, error)
	Idempotency func() (idempotency.Store, error)
	Close       func() error
}

// CheckModels checks the event store, the prepare backend and the
// idempotency store against their models, with at most runs runs each, a
// fresh database from open per run.
func CheckModels(t *testing.T, runs int, open func(rt *rapid.T) ModelDB) {
	rapidruns.Limit(t, runs)
	t.Run("events", func(t *testing.T) {
		eventstoremodel.Check(t, func(rt *rapid.T) (eventstore.Store, func()) {
			db := open(rt)
			st, err := db.Events()
			return modelStore(rt, db, st, err, func() error { return st.Close() })
		})
	})
	t.Run("prepare", func(t *testing.T) {
		preparemodel.Check(t, func(rt *rapid.T) (prepare.Backend, func()) {
			db := open(rt)
			b, err := db.Prepare()
			return modelStore(rt, db, b, err, nil)
		})
	})
	t.Run("idempotency", func(t *testing.T) {
		idempotencymodel.Check(t, func(rt *rapid.T) (idempotency.Store, func()) {
			db := open(rt)
			s, err := db.Idempotency()
			return modelStore(rt, db, s, err, nil)
		})
	})
}

// modelStore returns v and the function that closes it (closeV, if set)
// and db, or fails rt with err.
func modelStore[T any](rt *rapid.T, db ModelDB, v T, err error, closeV func() error) (T, func()) {
	if err != nil {
		_ = db.Close()
		rt.Fatal(err)
	}
	return v, func() {
		var errV error
		if closeV != nil {
			errV = closeV()
		}
		if err := errors.Join(errV, db.Close()); err != nil {
			rt.Error(err)
		}
	}
}

// ModelDBOf returns the ModelDB of a backend's database d from its
// package's constructors, each with its zero (default) options, in the
// event store of the models' bounded context.
func ModelDBOf[D, EO, PO, IO any, ES EventStore, PB prepare.Backend, IS idempotency.Store](ctx context.Context, d D,
	events func(context.Context, D, string, EO) (ES, error),
	prep func(context.Context, D, PO) (PB, error),
	idem func(context.Context, D, IO) (IS, error),
	closeDB func() error,
) ModelDB {
	return ModelDB{
		Events: func() (EventStore, error) {
			var opts EO
			return events(ctx, d, eventstoremodel.Aggregate.Context, opts)
		},
		Prepare: func() (prepare.Backend, error) {
			var opts PO
			return prep(ctx, d, opts)
		},
		Idempotency: func() (idempotency.Store, error) {
			var opts IO
			return idem(ctx, d, opts)
		},
		Close: closeDB,
	}
}
