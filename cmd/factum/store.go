package main

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/factum-go/factum/eventstore"
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

// openStore opens the event store opts select.
//
// SEAM: the SQLite and PostgreSQL event stores are being built in their
// adapter packages; until they land, the default is the in-memory store,
// announced as such, and PostgreSQL is refused with a clear error.
func openStore(_ context.Context, opts storeOptions, log io.Writer) (*openedStore, error) {
	if opts.PostgresURL != "" {
		return nil, errors.New("the PostgreSQL event store is not in this build yet: unset FACTUM_POSTGRES_URL / --postgres-url")
	}
	if !opts.Memory {
		fmt.Fprintf(log, "factum: the SQLite event store is not in this build yet; using the in-memory store (data directory %s unused)\n", opts.DataDir)
	}
	return &openedStore{
		store: eventstore.NewMemory(),
		where: "in memory: the data is lost when the process exits",
		close: func() error { return nil },
	}, nil
}
