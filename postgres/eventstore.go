package postgres

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"sync"
	"time"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/eventstore"
	"github.com/factum-go/factum/internal/built"
	"github.com/factum-go/factum/internal/sqlstore"
	"github.com/jackc/pgx/v5/pgxpool"
)

// EventStoreOptions configures NewEventStore. The zero value is the
// documented default.
type EventStoreOptions struct {
	// MaxBatch bounds how many concurrent appends, of different
	// aggregates, are written by one statement (default 64). 1 turns
	// coalescing off: every append is its own statement and transaction.
	MaxBatch int
	// Writers is how many append statements may run at once (default 2).
	// Appends arriving while every writer is busy wait and are coalesced
	// into the next statements: fewer writers make bigger statements and
	// fewer commits, which is what raises throughput where the database's
	// CPU or commit flushes are the limit (BenchmarkAppendWriters compares
	// writer counts on a given machine). Raise it when the database is far
	// away or has many cores. Each writer keeps a
	// connection of its own, outside the pool's MaxConns, for the store's
	// life.
	Writers int
	// PollInterval bounds how long WaitLog sleeps between looks at the log
	// when no notification comes (default 1 s).
	PollInterval time.Duration
	// ReadOwnAppendsWait bounds how long ReadLog waits for the store's own
	// latest append to become readable in the log (default 1 s; negative:
	// do not wait). See ReadLog.
	ReadOwnAppendsWait time.Duration
	// NotifyInterval is the least time between two NOTIFYs announcing
	// appends to other processes (default 10 ms; negative: no gap). The
	// appends of an interval share one notification, so a waiter in
	// another process learns of an append at most this late. Each NOTIFY
	// is a transaction and a round trip of its own: one per append cost
	// single-stream appends about a quarter of their throughput, one per
	// 2 ms still about a tenth. Waiters of the same store are woken at
	// once regardless.
	NotifyInterval time.Duration
	// DisableNotify turns off NOTIFY after appends. Waiters in other
	// processes then learn of appends by polling only.
	DisableNotify bool
}

// esMaxContextLen keeps every table and index name ("factum_<context>_"
// and the longest suffix, "streams_ver") within PostgreSQL's 63-byte
// identifiers, which the server would otherwise truncate silently.
const esMaxContextLen = 63 - len("factum_") - len("_") - len("streams_ver")

// EventStore is the PostgreSQL eventstore.Store of one bounded context. Its
// streams live in the table factum_<context>_streams, one row per stream
// with the stream's events as one JSON array, so an append is one row.
//
// # Appends
//
// Each append is one conditional INSERT, atomic in the database: the unique
// indexes refuse a taken (aggregate, version) or (aggregate, request ID),
// and the INSERT's own WHERE admits a row only at version 1 or when version
// - 1 exists in the same tenant. Concurrent appends of different aggregates
// are coalesced into one multi-row statement (INSERT … SELECT FROM unnest
// … RETURNING), written by one of Writers writers, each on a connection of
// its own. A unique violation, recognised by the name of the index it
// reports, makes a multi-row statement run again with ON CONFLICT DO
// NOTHING, so that the refused rows alone stay out. A row that does not
// come back is classified afterwards by reading the committed rows that
// refused it, in the contract's precedence. Nothing is decided before the
// insert.
//
// # The global log
//
// Log positions come from a sequence at insert time, but transactions
// commit in any order, so a reader going by position alone could read
// position 2, checkpoint it, and never see position 1 committing later.
// Each row therefore also stores its transaction's ID (xid8), and the log
// is read in (xid, position) order, only below the horizon
// pg_snapshot_xmin(pg_current_snapshot()), the oldest transaction still
// running. Every row below the horizon is final, and a transaction still
// running when a reader reads has an ID at or above the horizon, so every
// row it commits later sorts after anything the reader has read: nothing is
// skipped, however transactions interleave, including one that took its
// ID early and inserted late. Position.Tx is the xid, Position.Seq the
// sequence number.
//
// Each aggregate's streams keep their version order in the log: the INSERT
// admits version n only when version n-1 is visible to its snapshot, so
// n-1's transaction had committed, and taken its ID, before n's statement
// began; n's transaction takes its ID at its first insert, later, and IDs
// are handed out in increasing order. (A batch statement never holds two
// versions of one aggregate.) A group of one aggregate's streams
// (AppendBuiltGroup) is one statement of its own, its rows in one
// transaction: they share its ID and take their seq in version order, and
// the first is admitted by the same rule (see esGroupSQL).
//
// The horizon is the whole server's: a long transaction anywhere on the
// server holds the log back (without loss) until it ends. Keep
// transactions short; idle-in-transaction sessions stall consumers.
//
// Appends NOTIFY listening stores after they commit, waking WaitLog across
// processes; appends through the same store wake its waiters at once; and
// WaitLog polls as the fallback.
//
// An EventStore is the eventstore front end (which checks input, contexts
// and shapes the errors) over the PostgreSQL backend. It is safe for
// concurrent use. Close it before closing its DB.
type EventStore struct {
	*eventstore.Front
	reads   *sqlstore.EventReads
	db      *DB
	pool    *pgxpool.Pool
	context string
	table   string // quoted identifier
	channel string // NOTIFY channel

	// The unique indexes of the append contract, as the server names them
	// in unique violations.
	versionIndex, requestIndex string
	opts                       EventStoreOptions
	q                          esQueries

	life     context.Context // ends at Close
	stopLife context.CancelFunc

	appends *sqlstore.Appender[*esWriter] // one batch in flight per writer
	backend *sqlstore.EventBackend

	notifyCh chan struct{}
	bg       sync.WaitGroup // notifier and listener
	listener esListener

	stats sqlstore.Stats

	ownMu   sync.Mutex
	ownLast factum.Position // the highest position this store appended
}

// esLog is the store's log: the part of its backend that is PostgreSQL's
// own.
type esLog EventStore

// ErrEventStoreClosed is returned by Append after Close. It wraps
// factum.ErrClosed.
var ErrEventStoreClosed = fmt.Errorf("postgres: event store: %w", factum.ErrClosed)

// NewEventStore returns the event store of boundedContext in db, applying
// its schema migrations (component "eventstore:<context>", tables prefixed
// factum_<context>_) if they are not applied yet. Context names longer than
// 44 bytes are refused, as PostgreSQL would truncate the table names.
func NewEventStore(ctx context.Context, db *DB, boundedContext string, opts EventStoreOptions) (*EventStore, error) {
	if opts.MaxBatch < 0 || opts.Writers < 0 || opts.PollInterval < 0 {
		return nil, factum.IllegalArgument("postgres: event store options: MaxBatch, Writers and PollInterval must not be negative")
	}
	if opts.MaxBatch == 0 {
		opts.MaxBatch = 64
	}
	if opts.Writers == 0 {
		opts.Writers = 2
	}
	if opts.NotifyInterval == 0 {
		opts.NotifyInterval = 10 * time.Millisecond
	}
	if opts.PollInterval == 0 {
		opts.PollInterval = time.Second
	}
	if opts.ReadOwnAppendsWait == 0 {
		opts.ReadOwnAppendsWait = time.Second
	}
	table, err := sqlstore.Setup(ctx, &dialect, db.migrator(), sqlstore.Component{Name: "eventstore", FS: migrations, Table: "streams"}, boundedContext)
	if err != nil {
		return nil, err
	}
	prefix := "factum_" + boundedContext + "_"
	var schema string
	if err := db.Pool().QueryRow(ctx, `SELECT current_schema()`).Scan(&schema); err != nil {
		return nil, fmt.Errorf("postgres: event store %s: %w", boundedContext, err)
	}
	// One channel per table: stores of other schemas or contexts do not
	// wake each other. Hashed, as channel names are bounded like
	// identifiers.
	sum := sha256.Sum256([]byte(schema + "." + table))
	life, stop := context.WithCancel(context.Background())
	s := &EventStore{
		db:           db,
		pool:         db.Pool(),
		context:      boundedContext,
		table:        table,
		versionIndex: prefix + "streams_ver",
		requestIndex: prefix + "streams_req",
		channel:      "factum_log_" + hex.EncodeToString(sum[:10]),
		opts:         opts,
		q:            esBuildQueries(table),
		life:         life,
		stopLife:     stop,
		notifyCh:     make(chan struct{}, 1),
	}
	s.reads = sqlstore.NewEventReads(&dialect, boundedContext, table, esColumns, db.executor(), esScan)
	writers := make([]*esWriter, opts.Writers)
	for i := range writers {
		writers[i] = &esWriter{}
	}
	s.appends = sqlstore.NewAppender(&dialect, ErrEventStoreClosed, writers, opts.MaxBatch, true, s.flush)
	s.backend = &sqlstore.EventBackend{EventReads: s.reads, EventLog: (*esLog)(s), Appends: s.appends, Groups: (*esGroups)(s), Closed: ErrEventStoreClosed}
	if s.Front, err = s.backend.NewFront(); err != nil {
		stop()
		return nil, err
	}
	s.listener.init(s)
	if !opts.DisableNotify {
		s.bg.Go(s.runNotifier)
	}
	return s, nil
}

// BuiltOwner implements built.Appender: the store appends the executor's
// streams by its front end's AppendBuilt.
func (s *EventStore) BuiltOwner() built.Owner { return built.OwnedBy(s) }

// Context returns the bounded context the store serves.
func (s *EventStore) Context() string { return s.context }

// Close stops accepting appends and group appends, finishes those already
// accepted, and stops the store's listener. It does not close the DB.
func (s *EventStore) Close() error {
	s.backend.CloseGroups()
	if !s.appends.Close(func(w *esWriter) { w.close(context.Background()) }) {
		return nil
	}
	s.stopLife()
	s.bg.Wait()
	s.listener.stop()
	return nil
}

// appended records the store's own appends: it raises ownLast and wakes,
// through NOTIFY, other processes' waiters (the front end wakes the
// store's own).
func (s *EventStore) appended(last factum.Position) {
	s.ownMu.Lock()
	if s.ownLast.Less(last) {
		s.ownLast = last
	}
	s.ownMu.Unlock()
	if !s.opts.DisableNotify {
		select {
		case s.notifyCh <- struct{}{}:
		default: // a notification is already due
		}
	}
}

// own returns the highest position the store appended.
func (s *EventStore) own() factum.Position {
	s.ownMu.Lock()
	defer s.ownMu.Unlock()
	return s.ownLast
}

// runNotifier sends one NOTIFY per burst of appends, and at most one per
// NotifyInterval. It runs outside the append transactions: NOTIFY inside
// them would take PostgreSQL's database-wide notification lock at every
// commit and serialise the appends' commits. Its own commit need not be
// durable (a lost notification only delays a waiter until it polls), so it
// skips the flush.
func (s *EventStore) runNotifier() {
	var last time.Time
	final := func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		_, _ = s.pool.Exec(ctx, s.q.notify, s.channel)
		cancel()
	}
	for {
		select {
		case <-s.notifyCh:
		case <-s.life.Done():
			select {
			case <-s.notifyCh: // due, and the store closes: announce it now
				final()
			default:
			}
			return
		}
		if wait := s.opts.NotifyInterval - time.Since(last); wait > 0 {
			t := time.NewTimer(wait)
			select {
			case <-t.C:
			case <-s.life.Done():
				// Closing: the appends made while waiting (among them
				// those Close drained) are still announced.
				t.Stop()
				final()
				return
			}
			// The notification below announces the appends of the wait too.
			select {
			case <-s.notifyCh:
			default:
			}
		}
		last = time.Now()
		_, _ = s.pool.Exec(s.life, s.q.notify, s.channel) // waiters poll if it fails
	}
}

var _ eventstore.Store = (*EventStore)(nil)
