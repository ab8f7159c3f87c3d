package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"

	"github.com/factum-go/factum/event"
	"github.com/factum-go/factum/examples/order"
	"github.com/factum-go/factum/memory"
	"github.com/factum-go/factum/postgres"
	"github.com/factum-go/factum/projection"
	"github.com/factum-go/factum/sqlite"
)

// summariesComponent returns the engine component running the order
// summaries projection in the service's database: its tables and
// checkpoint live beside the events, so PROJECTED on an order waits for
// the summaries' transaction and a restart resumes it where it committed.
// With --memory the read model goes to a temporary SQLite file, removed
// when the store closes: like everything else there, it does not outlive
// the process. The projection's close is chained into st.close; mw (the
// telemetry's event middleware) wraps the projection's function.
func summariesComponent(ctx context.Context, st *openedStore, log *slog.Logger, mw []event.Middleware) (*projection.Component, *projection.Projection, error) {
	store, closeStore, err := projectionStore(ctx, st.storage)
	if err != nil {
		return nil, nil, fmt.Errorf("order summaries: %w", err)
	}
	if closeStore != nil {
		prev := st.close
		st.close = func() error { return errors.Join(prev(), closeStore()) }
	}
	p, err := order.SummariesProjection()
	if err != nil {
		return nil, nil, err
	}
	return projection.NewComponent(projection.ComponentConfig{
		Store:       store,
		Projections: []*projection.Projection{p},
		Runner:      projection.Config{Logger: log, Middleware: mw},
	}), p, nil
}

// projectionStore returns the projection store of the service's context in
// the storage's own database, and what to close beyond it (nil if
// nothing).
func projectionStore(ctx context.Context, s storage) (projection.Store, func() error, error) {
	switch db := s.(type) {
	case *sqlite.DB:
		st, err := sqlite.NewProjectionStore(ctx, db, boundedContext)
		return st, nil, err
	case *postgres.DB:
		st, err := postgres.NewProjectionStore(ctx, db, boundedContext)
		return st, nil, err
	case *memory.Storage:
		return temporaryProjectionStore(ctx)
	}
	return nil, nil, fmt.Errorf("no projection store for storage %T", s)
}

// temporaryProjectionStore opens a SQLite database in a new temporary
// directory, removed by the returned close.
func temporaryProjectionStore(ctx context.Context) (projection.Store, func() error, error) {
	dir, err := os.MkdirTemp("", "factum-projections-")
	if err != nil {
		return nil, nil, err
	}
	db, err := sqlite.Open(ctx, filepath.Join(dir, "projections.db"))
	if err != nil {
		return nil, nil, errors.Join(err, os.RemoveAll(dir))
	}
	closeAll := func() error { return errors.Join(db.Close(), os.RemoveAll(dir)) }
	st, err := sqlite.NewProjectionStore(ctx, db, boundedContext)
	if err != nil {
		return nil, nil, errors.Join(err, closeAll())
	}
	return st, closeAll, nil
}
