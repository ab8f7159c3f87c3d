package postgres

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/internal/memo"
	"github.com/factum-go/factum/internal/sqlstore"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// Options configures Open. The zero value is the documented default.
type Options struct {
	// Schema, when set, is created if missing and made the only entry of
	// every connection's search_path, so factum's tables live there.
	Schema string
	// ConnectTimeout bounds start-up when the server does not answer
	// (default 10 s).
	ConnectTimeout time.Duration
	// MaxConns bounds the pool (default DefaultMaxConns). The event store's
	// coalesced appends, its log readers, every consumer group and the
	// compensation scheduler share the pool; pgxpool's own default of
	// max(4, CPUs) starves them on small machines.
	MaxConns int32
}

// DefaultMaxConns is the pool size Open uses when neither Options.MaxConns
// nor the URL's pool_max_conns parameter sets one.
const DefaultMaxConns = 16

// DB is a connection pool shared by factum's PostgreSQL components. It is
// safe for concurrent use.
type DB struct {
	pool     *pgxpool.Pool
	schema   string
	*storage // the stores of each context (storage.go)
}

// Open connects to the database at url (a postgres:// URL or a key=value
// string). It pings the server and fails with a clear error, within
// ConnectTimeout, when it cannot be reached.
//
// Options are optional: none means the zero Options; more than one is an
// IllegalArgument error.
func Open(ctx context.Context, url string, options ...Options) (*DB, error) {
	opts, err := sqlstore.OneOptions("postgres", options)
	if err != nil {
		return nil, err
	}
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		return nil, factum.Errorf(factum.CodeIllegalArgument, "postgres: parse connection string: %w", err)
	}
	if opts.ConnectTimeout <= 0 {
		opts.ConnectTimeout = 10 * time.Second
	}
	if cfg.ConnConfig.ConnectTimeout == 0 || cfg.ConnConfig.ConnectTimeout > opts.ConnectTimeout {
		cfg.ConnConfig.ConnectTimeout = opts.ConnectTimeout
	}
	switch {
	case opts.MaxConns > 0:
		cfg.MaxConns = opts.MaxConns
	case !strings.Contains(url, "pool_max_conns"):
		cfg.MaxConns = DefaultMaxConns
	}
	if opts.Schema != "" {
		if err := factum.ValidateName("schema", opts.Schema); err != nil {
			return nil, err
		}
		cfg.ConnConfig.RuntimeParams["search_path"] = opts.Schema
	}
	ctx, cancel := context.WithTimeout(ctx, opts.ConnectTimeout)
	defer cancel()
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("postgres: connect to %s:%d: %w", cfg.ConnConfig.Host, cfg.ConnConfig.Port, err)
	}
	if err := pool.Ping(ctx); err != nil {
		pool.Close()
		return nil, fmt.Errorf("postgres: connect to %s:%d/%s: %w", cfg.ConnConfig.Host, cfg.ConnConfig.Port, cfg.ConnConfig.Database, err)
	}
	d := &DB{pool: pool, schema: opts.Schema}
	d.storage = memo.NewStores(d.openers())
	if err := d.init(ctx); err != nil {
		pool.Close()
		return nil, err
	}
	return d, nil
}

func (d *DB) init(ctx context.Context) error {
	if d.schema != "" {
		if _, err := d.pool.Exec(ctx, "CREATE SCHEMA IF NOT EXISTS "+pgx.Identifier{d.schema}.Sanitize()); err != nil {
			// Two processes creating the same schema at once may race on
			// the catalog; the loser sees the schema already there.
			var exists bool
			if qerr := d.pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_namespace WHERE nspname = $1)`, d.schema).Scan(&exists); qerr != nil || !exists {
				return fmt.Errorf("postgres: create schema %s: %w", d.schema, err)
			}
		}
	}
	return d.withLock(ctx, func(tx pgx.Tx) error {
		_, err := tx.Exec(ctx, `CREATE TABLE IF NOT EXISTS factum_migrations (
			component TEXT NOT NULL,
			version INTEGER NOT NULL,
			name TEXT NOT NULL,
			applied_at TIMESTAMPTZ NOT NULL DEFAULT now(),
			PRIMARY KEY (component, version))`)
		if err != nil {
			return fmt.Errorf("postgres: create migrations table: %w", err)
		}
		return nil
	})
}

// Pool returns the connection pool.
func (d *DB) Pool() *pgxpool.Pool { return d.pool }

// Schema returns the schema set in Options, or "".
func (d *DB) Schema() string { return d.schema }

// Close closes the stores the DB made (storage.go), then the pool.
func (d *DB) Close() { _ = memo.Close(d.storage); d.pool.Close() }
