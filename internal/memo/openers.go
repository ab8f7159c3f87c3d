package memo

import (
	"context"

	"github.com/factum-go/factum/event"
	"github.com/factum-go/factum/eventstore"
	"github.com/factum-go/factum/idempotency"
	"github.com/factum-go/factum/prepare"
	"github.com/factum-go/factum/snapshot"
)

// OpenersOf returns the Openers of a SQL backend's database d from its
// package's constructors, each called with its zero (default) options, so
// that every backend's storage handle is one line over its constructors.
func OpenersOf[D, EO, PO, IO any, ES eventstore.Store, SS snapshot.QueryStore, CS event.CheckpointStore, PB prepare.Backend, IS idempotency.Store](
	d D,
	events func(context.Context, D, string, EO) (ES, error),
	snapshots func(context.Context, D, string) (SS, error),
	checkpoints func(context.Context, D, string) (CS, error),
	prep func(context.Context, D, PO) (PB, error),
	idem func(context.Context, D, IO) (IS, error),
) Openers {
	return Openers{
		Events: func(ctx context.Context, bc string) (eventstore.Store, error) {
			var opts EO
			return nilIfErr[eventstore.Store](events(ctx, d, bc, opts))
		},
		Snapshots: func(ctx context.Context, bc string) (snapshot.QueryStore, error) {
			return nilIfErr[snapshot.QueryStore](snapshots(ctx, d, bc))
		},
		Checkpoints: func(ctx context.Context, bc string) (event.CheckpointStore, error) {
			return nilIfErr[event.CheckpointStore](checkpoints(ctx, d, bc))
		},
		Prepare: func(ctx context.Context) (prepare.Backend, error) {
			var opts PO
			return nilIfErr[prepare.Backend](prep(ctx, d, opts))
		},
		Idempotency: func(ctx context.Context) (idempotency.Store, error) {
			var opts IO
			return nilIfErr[idempotency.Store](idem(ctx, d, opts))
		},
	}
}

// nilIfErr converts a constructor's concrete result to the interface I,
// nil on an error (never an interface holding a nil pointer).
func nilIfErr[I any, T any](v T, err error) (I, error) {
	var zero I
	if err != nil {
		return zero, err
	}
	i, _ := any(v).(I)
	return i, nil
}
