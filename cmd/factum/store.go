package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	neturl "net/url"
	"os"
	"path/filepath"

	"github.com/factum-go/factum/engine"
	"github.com/factum-go/factum/idempotency"
	"github.com/factum-go/factum/memory"
	"github.com/factum-go/factum/postgres"
	"github.com/factum-go/factum/prepare"
	"github.com/factum-go/factum/sqlite"
)

// storeOptions selects the storage of the service.
type storeOptions struct {
	// DataDir holds the embedded SQLite database.
	DataDir string
	// PostgresURL, when set, selects PostgreSQL instead.
	PostgresURL string
	// Memory selects in-memory storage (nothing survives the process).
	Memory bool
}

// storage is what the service needs of a backend: the engine's stores,
// the prepare-key backend (usernames) and the idempotency-key store.
type storage interface {
	engine.Storage
	PrepareBackend(ctx context.Context) (prepare.Backend, error)
	IdempotencyStore(ctx context.Context) (idempotency.Store, error)
}

// openedStore is the service's storage, with what to say about it and how
// to release it.
type openedStore struct {
	storage storage
	// where says where the data lives, for the start-up message.
	where string
	// ping, if set, checks that the database answers (for /readyz).
	ping  func(ctx context.Context) error
	close func() error
}

// boundedContext is the context of the example aggregates.
const boundedContext = "shop"

// openStore opens the storage opts select: SQLite in the data directory by
// default, PostgreSQL when a URL is given, or memory. --memory wins over a
// PostgreSQL URL, which may come from the environment (FACTUM_POSTGRES_URL)
// rather than from the command line.
func openStore(ctx context.Context, opts storeOptions, _ io.Writer) (*openedStore, error) {
	switch {
	case opts.Memory:
		db := memory.New()
		return &openedStore{storage: db, where: "in memory: it is lost when the process exits", close: db.Close}, nil
	case opts.PostgresURL != "":
		db, err := postgres.Open(ctx, opts.PostgresURL)
		if err != nil {
			return nil, err
		}
		return &openedStore{
			storage: db, where: "in PostgreSQL (" + redact(opts.PostgresURL) + ")",
			ping: db.Pool().Ping, close: func() error { db.Close(); return nil },
		}, nil
	}
	return openSQLite(ctx, opts.DataDir)
}

// openSQLite opens factum.db in dataDir, which it locks against a second
// service.
func openSQLite(ctx context.Context, dataDir string) (*openedStore, error) {
	dir, err := filepath.Abs(dataDir)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("data directory: %w", err)
	}
	unlock, err := lockDataDir(dir)
	if err != nil {
		return nil, err
	}
	path := filepath.Join(dir, "factum.db")
	db, err := sqlite.Open(ctx, path)
	if err != nil {
		return nil, errors.Join(err, unlock())
	}
	return &openedStore{
		storage: db, where: "in " + path + " (SQLite)",
		ping:  db.Reader().PingContext, // the writer is busy for whole transactions under load
		close: func() error { return errors.Join(db.Close(), unlock()) },
	}, nil
}

// redact hides a password in a connection URL for printing.
func redact(raw string) string {
	u, err := neturl.Parse(raw)
	if err != nil || u.User == nil {
		return raw
	}
	if _, has := u.User.Password(); has {
		u.User = neturl.UserPassword(u.User.Username(), "xxxxx")
	}
	return u.String()
}
