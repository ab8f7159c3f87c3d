package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	neturl "net/url"
	"os"
	"path/filepath"
	"time"

	"github.com/factum-go/factum/event"
	"github.com/factum-go/factum/eventstore"
	"github.com/factum-go/factum/idempotency"
	"github.com/factum-go/factum/postgres"
	"github.com/factum-go/factum/prepare"
	"github.com/factum-go/factum/snapshot"
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

// openedStore is the service's storage: the event store, the prepare-key
// backend (usernames) and the idempotency-key store, on one database, with
// what to say about it and how to release it.
type openedStore struct {
	store       eventstore.Store
	snapshots   snapshot.QueryStore
	checkpoints event.CheckpointStore
	prepare     prepare.Backend
	idempotency idempotency.Store
	// where says where the data lives, for the start-up message.
	where string
	// ping, if set, checks that the database answers (for /readyz).
	ping  func(ctx context.Context) error
	close func() error
}

// boundedContext is the context of the example aggregates: one event
// store serves it.
const boundedContext = "shop"

// openStore opens the storage opts select: SQLite in the data directory by
// default, PostgreSQL when a URL is given, or memory. --memory wins over a
// PostgreSQL URL, which may come from the environment (FACTUM_POSTGRES_URL)
// rather than from the command line.
func openStore(ctx context.Context, opts storeOptions, _ io.Writer) (*openedStore, error) {
	switch {
	case opts.Memory:
		idem, err := idempotency.NewMemory(idempotency.MemoryOptions{})
		if err != nil {
			return nil, err
		}
		return &openedStore{
			store:       eventstore.NewMemory(),
			snapshots:   snapshot.NewMemory(),
			checkpoints: event.NewMemoryCheckpoints(),
			prepare:     prepare.NewMemory(time.Now),
			idempotency: idem,
			where:       "in memory: it is lost when the process exits",
			close:       func() error { return nil },
		}, nil
	case opts.PostgresURL != "":
		return openPostgres(ctx, opts.PostgresURL)
	}
	return openSQLite(ctx, opts.DataDir)
}

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
	db, err := sqlite.Open(ctx, path, sqlite.Options{})
	if err != nil {
		return nil, errors.Join(err, unlock())
	}
	es, err := sqlite.NewEventStore(ctx, db, boundedContext, sqlite.EventStoreOptions{})
	if err != nil {
		return nil, errors.Join(err, db.Close(), unlock())
	}
	closers := []func() error{es.Close}
	closeAll := func() error {
		var errs []error
		for i := len(closers) - 1; i >= 0; i-- {
			errs = append(errs, closers[i]())
		}
		return errors.Join(append(errs, db.Close(), unlock())...)
	}
	snaps, err := sqlite.NewSnapshotStore(ctx, db, boundedContext)
	if err != nil {
		return nil, errors.Join(err, closeAll())
	}
	closers = append(closers, snaps.Close)
	cps, err := sqlite.NewCheckpointStore(ctx, db, boundedContext)
	if err != nil {
		return nil, errors.Join(err, closeAll())
	}
	closers = append(closers, cps.Close)
	pb, err := sqlite.NewPrepareBackend(ctx, db, sqlite.PrepareOptions{})
	if err != nil {
		return nil, errors.Join(err, closeAll())
	}
	idem, err := sqlite.NewIdempotencyStore(ctx, db, sqlite.IdempotencyOptions{})
	if err != nil {
		return nil, errors.Join(err, closeAll())
	}
	return &openedStore{
		store: es, snapshots: snaps, checkpoints: cps, prepare: pb, idempotency: idem,
		where: "in " + path + " (SQLite)",
		ping:  db.Reader().PingContext, // the writer is busy for whole transactions under load
		close: closeAll,
	}, nil
}

func openPostgres(ctx context.Context, url string) (*openedStore, error) {
	db, err := postgres.Open(ctx, url, postgres.Options{})
	if err != nil {
		return nil, err
	}
	es, err := postgres.NewEventStore(ctx, db, boundedContext, postgres.EventStoreOptions{})
	if err != nil {
		db.Close()
		return nil, err
	}
	closeAll := func() error { err := es.Close(); db.Close(); return err }
	snaps, err := postgres.NewSnapshotStore(ctx, db, boundedContext)
	if err != nil {
		return nil, errors.Join(err, closeAll())
	}
	cps, err := postgres.NewCheckpointStore(ctx, db, boundedContext)
	if err != nil {
		return nil, errors.Join(err, closeAll())
	}
	pb, err := postgres.NewPrepareBackend(ctx, db, postgres.PrepareOptions{})
	if err != nil {
		return nil, errors.Join(err, closeAll())
	}
	idem, err := postgres.NewIdempotencyStore(ctx, db, postgres.IdempotencyOptions{})
	if err != nil {
		return nil, errors.Join(err, closeAll())
	}
	return &openedStore{
		store: es, snapshots: snaps, checkpoints: cps, prepare: pb, idempotency: idem,
		where: "in PostgreSQL (" + redact(url) + ")",
		ping:  db.Pool().Ping,
		close: closeAll,
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
