package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/eventstore"
	"github.com/factum-go/factum/internal/built"
	"github.com/factum-go/factum/internal/sqlstore"
)

// EventStoreOptions configures NewEventStore. The zero value is the
// documented default.
type EventStoreOptions struct {
	// MaxBatch bounds how many concurrent appends are written in one
	// transaction (default 128). 1 turns coalescing off: every append
	// commits on its own.
	MaxBatch int
	// PollInterval is how often WaitLog looks for appends made by other
	// processes sharing the database file (default 200 ms). Appends made
	// through the store itself wake waiters at once.
	PollInterval time.Duration
}

// EventStore is the SQLite eventstore.Store of one bounded context. Its
// streams live in the table factum_<context>_streams, one row per stream
// with the stream's events as one JSON array.
//
// Appends are serial, on the database's single write connection: whoever
// writes takes every append waiting at that moment into one transaction
// (coalescing), shared with the other writes of the database queued at
// that moment (snapshot saves, checkpoints: the DB's write batcher), so
// that they all pay one commit; an append alone, with nothing to join, is
// one statement in autocommit mode. A group of one aggregate's streams
// (AppendBuiltGroup) is one write of that batcher, inside a savepoint of
// its shared transaction: all of it goes in, or none. Each append is one
// INSERT whose unique indexes and predecessor trigger (the table's
// BEFORE INSERT trigger drops a row whose version N > 1 has no version
// N - 1 in its tenant) enforce the contract; a row that does not go in is classified inside a
// transaction that tried it, still holding the write lock, so the
// classification sees exactly what refused it.
//
// The global log is gap-free: log positions come from the AUTOINCREMENT
// key, assigned inside write transactions that SQLite runs one at a time
// (one writer per database file, across processes too) and that commit in
// the order they took the write lock. So positions are handed out in
// commit order, and a reader's snapshot always holds every stream up to
// its newest one: no stream can appear later below a position already
// read. Position.Tx is therefore always zero.
//
// An EventStore is the eventstore front end (which checks input, contexts
// and shapes the errors) over the SQLite backend. It is safe for
// concurrent use. Close it before closing its DB.
type EventStore struct {
	*eventstore.Front
	reads   *sqlstore.EventReads
	db      *DB
	context string
	table   string // quoted identifier
	poll    time.Duration

	insert   *sql.Stmt // prepared on the write connection
	classify *sql.Stmt
	q        esQueries

	appends *sqlstore.Appender[struct{}] // the one writer, the write connection, has no state
	// backend's groups are closed by Close before it releases the write
	// statements, so that no group uses them after.
	backend *sqlstore.EventBackend

	stats sqlstore.Stats
	// autocommits counts the appends committed by their own statement,
	// outside the DB's batcher, whose transactions it counts itself:
	// together, the commits (benchmarks read them).
	autocommits atomic.Int64

	lastSeq atomic.Uint64 // highest position this store appended
}

// esLog is the store's log: the part of its backend that is SQLite's own.
type esLog EventStore

// ErrEventStoreClosed is returned by Append after Close. It wraps
// factum.ErrClosed.
var ErrEventStoreClosed = fmt.Errorf("sqlite: event store: %w", factum.ErrClosed)

// NewEventStore returns the event store of boundedContext in db, applying
// its schema migrations (component "eventstore:<context>", tables prefixed
// factum_<context>_) if they are not applied yet.
//
// Two contexts whose names differ only in letter case cannot share one
// database file (SQLite table names ignore case); the second one's
// migration fails with an error naming the table.
func NewEventStore(ctx context.Context, db *DB, boundedContext string, opts EventStoreOptions) (*EventStore, error) {
	if opts.MaxBatch < 0 || opts.PollInterval < 0 {
		return nil, factum.IllegalArgument("sqlite: event store options: MaxBatch and PollInterval must not be negative")
	}
	if opts.MaxBatch == 0 {
		opts.MaxBatch = 128
	}
	if opts.PollInterval == 0 {
		opts.PollInterval = 200 * time.Millisecond
	}
	table, err := sqlstore.Setup(ctx, &dialect, db.migrator(), sqlstore.Component{Name: "eventstore", FS: migrations, Table: "streams"}, boundedContext)
	if err != nil {
		return nil, err
	}
	s := &EventStore{
		db:      db,
		context: boundedContext,
		table:   table,
		poll:    opts.PollInterval,
	}
	s.q = esBuildQueries(s.table)
	// The consumers' and the processors' hot reads, prepared on the read
	// pool now and kept by the DB (parsing them on every call was a sixth
	// of serve's CPU under load), outside the bound of its lazily
	// prepared statements.
	s.reads = sqlstore.NewEventReads(&dialect, boundedContext, s.table, sqlstore.EventColumns, db.reads(), esScan)
	for _, q := range []string{s.q.readLog, s.q.logHasAfter, s.reads.LoadSQL, s.reads.LookupSQL, s.reads.RequestExistsSQL} {
		if _, err := db.readStmts.Prepare(ctx, q); err != nil {
			return nil, fmt.Errorf("sqlite: event store %s: prepare reads: %w", boundedContext, err)
		}
	}
	// Two batches in flight: while one is being written, the next queues
	// in the DB's batcher beside the consumers' writes and joins their
	// transaction, instead of waiting outside it for the first to finish
	// while they commit on their own.
	s.appends = sqlstore.NewAppender(&dialect, ErrEventStoreClosed, make([]struct{}, 2), opts.MaxBatch, false,
		func(_ struct{}, batch []*esRequest) []*esRequest {
			s.flush(batch)
			return nil
		})
	if s.insert, err = db.Writer().PrepareContext(ctx, esInsertSQL(s.table)); err != nil {
		return nil, fmt.Errorf("sqlite: event store %s: prepare insert: %w", boundedContext, err)
	}
	if s.classify, err = db.Writer().PrepareContext(ctx, esClassifySQL(s.table)); err != nil {
		s.insert.Close()
		return nil, fmt.Errorf("sqlite: event store %s: prepare classify: %w", boundedContext, err)
	}
	s.backend = &sqlstore.EventBackend{EventReads: s.reads, EventLog: (*esLog)(s), Appends: s.appends, Groups: (*esGroups)(s), Closed: ErrEventStoreClosed}
	if s.Front, err = s.backend.NewFront(); err != nil {
		return nil, errors.Join(err, s.insert.Close(), s.classify.Close())
	}
	return s, nil
}

// BuiltOwner implements built.Appender: the store appends the executor's
// streams by its front end's AppendBuilt.
func (s *EventStore) BuiltOwner() built.Owner { return built.OwnedBy(s) }

// Context returns the bounded context the store serves.
func (s *EventStore) Context() string { return s.context }

// Close stops accepting appends and group appends, finishes those already
// accepted and releases the store's own write statements; its reads'
// statements belong to the DB, which closes them. It does not close the
// DB.
func (s *EventStore) Close() error {
	s.backend.CloseGroups()
	if !s.appends.Close(nil) {
		return nil
	}
	return errors.Join(s.insert.Close(), s.classify.Close())
}

var _ eventstore.Store = (*EventStore)(nil)
