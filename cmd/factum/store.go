package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/factum-go/factum/eventstore"
	"github.com/factum-go/factum/sqlite"
)

// storeOptions selects the event store of the service.
type storeOptions struct {
	// DataDir holds the embedded SQLite database.
	DataDir string
	// PostgresURL, when set, selects PostgreSQL instead.
	PostgresURL string
	// Memory selects the in-memory store (nothing survives the process).
	Memory bool
}

// openedStore is an event store with what to say about it and how to
// release it.
type openedStore struct {
	store eventstore.Store
	// where says where the data lives, for the start-up message.
	where string
	close func() error
}

// boundedContext is the context of the example aggregates: one event
// store serves it.
const boundedContext = "shop"

// openStore opens the event store opts select: SQLite in the data
// directory by default.
//
// SEAM: the PostgreSQL event store is being built in package postgres;
// until it lands, --postgres-url is refused with a clear error.
func openStore(ctx context.Context, opts storeOptions, _ io.Writer) (*openedStore, error) {
	switch {
	case opts.PostgresURL != "":
		return nil, errors.New("the PostgreSQL event store is not in this build yet: unset FACTUM_POSTGRES_URL / --postgres-url")
	case opts.Memory:
		return &openedStore{
			store: eventstore.NewMemory(),
			where: "in memory: it is lost when the process exits",
			close: func() error { return nil },
		}, nil
	}
	dir, err := filepath.Abs(opts.DataDir)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("data directory: %w", err)
	}
	path := filepath.Join(dir, "factum.db")
	db, err := sqlite.Open(ctx, path, sqlite.Options{})
	if err != nil {
		return nil, err
	}
	es, err := sqlite.NewEventStore(ctx, db, boundedContext, sqlite.EventStoreOptions{})
	if err != nil {
		return nil, errors.Join(err, db.Close())
	}
	return &openedStore{
		store: es,
		where: "in " + path + " (SQLite)",
		close: func() error { return errors.Join(es.Close(), db.Close()) },
	}, nil
}
