package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"time"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/internal/memo"
	"github.com/factum-go/factum/internal/sqlstore"
	_ "modernc.org/sqlite" // registers the "sqlite" driver
)

// Options configures Open. The zero value is the documented default.
type Options struct {
	// Synchronous is SQLite's synchronous pragma: "FULL" (default) or
	// "NORMAL". See the package documentation for the trade-off.
	Synchronous string
	// BusyTimeout bounds how long a statement waits for a lock held by
	// another process (default 5 s).
	BusyTimeout time.Duration
	// MaxReaders bounds the read connection pool (default 4).
	MaxReaders int
}

// DB is an open SQLite database shared by factum's SQLite components. It is
// safe for concurrent use.
type DB struct {
	path   string
	writer *sql.DB // exactly one connection: all writes are serial
	reader *sql.DB
	// batch commits the writes of every store of the database that
	// arrive together in one transaction (write_batch.go).
	batch *writeBatcher
	// readStmts and writeStmts keep the stores' statements prepared on
	// each pool (dialect.go): parsing a statement costs SQLite about as
	// much as running a point read. The reader's are prepared on first
	// use; the writer's when their store is made, since a statement run
	// inside a transaction holds the writer's only connection.
	readStmts, writeStmts *sqlstore.StmtCache
	*storage              // the stores of each context (storage.go)
}

// Open opens the database at path, creating the file and its directory if
// needed. It fails with a clear error, and does not hang, when the file
// cannot be opened or is not a database. Options are optional: none means
// the zero Options; more than one is an IllegalArgument error.
func Open(ctx context.Context, path string, options ...Options) (*DB, error) {
	opts, err := sqlstore.OneOptions("sqlite", options)
	if err != nil {
		return nil, err
	}
	if path == "" {
		return nil, factum.IllegalArgument("sqlite: empty database path")
	}
	if opts.Synchronous == "" {
		opts.Synchronous = "FULL"
	}
	if opts.Synchronous != "FULL" && opts.Synchronous != "NORMAL" {
		return nil, factum.IllegalArgument(fmt.Sprintf("sqlite: synchronous %q: want FULL or NORMAL", opts.Synchronous))
	}
	if opts.BusyTimeout <= 0 {
		opts.BusyTimeout = 5 * time.Second
	}
	if opts.MaxReaders <= 0 {
		opts.MaxReaders = 4
	}
	if dir := filepath.Dir(path); dir != "." {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, fmt.Errorf("sqlite: create directory for %s: %w", path, err)
		}
	}
	q := url.Values{}
	q.Add("_pragma", fmt.Sprintf("busy_timeout(%d)", opts.BusyTimeout.Milliseconds()))
	q.Add("_pragma", "journal_mode(WAL)")
	q.Add("_pragma", "synchronous("+opts.Synchronous+")")
	q.Add("_pragma", "foreign_keys(1)")
	q.Set("_txlock", "immediate")
	dsn := "file:" + path + "?" + q.Encode()

	writer, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, fmt.Errorf("sqlite: open %s: %w", path, err)
	}
	writer.SetMaxOpenConns(1)
	writer.SetConnMaxIdleTime(0)
	reader, err := sql.Open("sqlite", dsn)
	if err != nil {
		writer.Close()
		return nil, fmt.Errorf("sqlite: open %s: %w", path, err)
	}
	reader.SetMaxOpenConns(opts.MaxReaders)
	// Every reader stays open between reads: a connection closed as
	// surplus idle (database/sql keeps two by default) is opened again
	// under load, with its pragmas, its statements prepared anew and a
	// cold page cache.
	reader.SetMaxIdleConns(opts.MaxReaders)
	reader.SetConnMaxIdleTime(0)
	d := &DB{path: path, writer: writer, reader: reader,
		readStmts: sqlstore.NewStmtCache(reader, true), writeStmts: sqlstore.NewStmtCache(writer, false)}
	d.batch = &writeBatcher{db: d}
	d.storage = memo.NewStores(d.openers())
	if err := d.initRetrying(ctx, opts.BusyTimeout); err != nil {
		d.Close()
		return nil, err
	}
	return d, nil
}

// initRetrying runs init, again while it finds the database busy, for up to
// busy: the switch of a new file to WAL mode needs the file to itself, and
// SQLite answers a connection that races another's switch with SQLITE_BUSY
// at once instead of calling the busy handler.
func (d *DB) initRetrying(ctx context.Context, busy time.Duration) error {
	deadline := time.Now().Add(busy)
	wait := time.Millisecond
	for {
		err := d.init(ctx)
		if err == nil || !isBusy(err) || time.Now().After(deadline) {
			return err
		}
		t := time.NewTimer(wait)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return errors.Join(err, ctx.Err())
		}
		wait = min(2*wait, 50*time.Millisecond)
	}
}

// isBusy reports whether err is SQLite's SQLITE_BUSY or SQLITE_LOCKED
// (primary codes 5 and 6, whatever the extended code).
func isBusy(err error) bool {
	var coded interface{ Code() int }
	if !errors.As(err, &coded) {
		return false
	}
	c := coded.Code() & 0xff
	return c == 5 || c == 6
}

func (d *DB) init(ctx context.Context) error {
	var mode string
	if err := d.writer.QueryRowContext(ctx, "PRAGMA journal_mode").Scan(&mode); err != nil {
		return fmt.Errorf("sqlite: open %s: %w", d.path, err)
	}
	if mode != "wal" {
		return fmt.Errorf("sqlite: %s: journal mode is %q, want wal", d.path, mode)
	}
	_, err := d.writer.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS factum_migrations (
		component TEXT NOT NULL,
		version INTEGER NOT NULL,
		name TEXT NOT NULL,
		applied_at TEXT NOT NULL,
		PRIMARY KEY (component, version))`)
	if err != nil {
		return fmt.Errorf("sqlite: create migrations table in %s: %w", d.path, err)
	}
	return nil
}

// Path returns the database file's path.
func (d *DB) Path() string { return d.path }

// Writer returns the single-connection pool for writes. Components use it
// for every statement that writes, so that writes never contend for the
// database lock inside one process.
func (d *DB) Writer() *sql.DB { return d.writer }

// Reader returns the pool for reads.
func (d *DB) Reader() *sql.DB { return d.reader }

// Close closes the stores the DB made (storage.go), the statements the
// stores prepared, then both pools.
func (d *DB) Close() error {
	return errors.Join(memo.Close(d.storage), d.readStmts.Close(), d.writeStmts.Close(), d.writer.Close(), d.reader.Close())
}
