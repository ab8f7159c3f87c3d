package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"sync"
)

// MaxCachedStmts bounds how many statements a StmtCache prepares on first
// use: the hot statements of the stores are a few dozen, and a caller
// whose statements vary without bound (query plans translated to SQL)
// runs the ones past the bound unprepared instead of growing the cache.
const MaxCachedStmts = 256

// StmtCache keeps statements prepared on one database/sql pool, keyed by
// their text, so that a statement run again is not parsed again: parsing
// costs SQLite as much as running a point read. database/sql prepares a
// cached statement once on each of the pool's connections it runs on.
//
// The cache is filled two ways. Prepare adds a statement at once; Stmt
// also prepares a statement it does not hold, on first use, while the
// cache holds fewer than MaxCachedStmts, unless the cache was made with
// NewStmtCache's lazy false: a pool whose only
// connection a transaction may be holding (SQLite's writer) cannot prepare
// on the pool from inside that transaction without waiting for itself, so
// its statements are added by Prepare when their store is made, outside
// any transaction, and Stmt only looks them up.
//
// A StmtCache is safe for concurrent use; its statements live until Close.
type StmtCache struct {
	db   *sql.DB
	lazy bool

	mu     sync.RWMutex
	stmts  map[string]*sql.Stmt
	closed bool
}

// NewStmtCache returns an empty cache of statements prepared on db; lazy
// says whether Stmt prepares a statement it does not hold.
func NewStmtCache(db *sql.DB, lazy bool) *StmtCache {
	return &StmtCache{db: db, lazy: lazy, stmts: map[string]*sql.Stmt{}}
}

// Prepare prepares query on the pool and keeps it, unless it is kept
// already, and returns it. The bound on the cache's size is for Stmt's
// statements: those Prepare adds are a store's own, a fixed few. An error
// is the database's refusal of the statement, or ErrStmtCacheClosed.
func (c *StmtCache) Prepare(ctx context.Context, query string) (*sql.Stmt, error) {
	st, err := c.prepare(ctx, query, false)
	if err == nil && st == nil {
		err = ErrStmtCacheClosed
	}
	return st, err
}

// ErrStmtCacheClosed is Prepare's error after Close.
var ErrStmtCacheClosed = errors.New("statement cache closed")

// Stmt returns the statement of query, or nil when the caller runs it
// unprepared: the cache is closed, it is not lazy and does not hold query,
// it is lazy and full, or preparing it failed (running it unprepared then
// reports the error).
func (c *StmtCache) Stmt(ctx context.Context, query string) *sql.Stmt {
	c.mu.RLock()
	st, ok := c.stmts[query]
	c.mu.RUnlock()
	if ok || !c.lazy {
		return st
	}
	st, _ = c.prepare(ctx, query, true)
	return st
}

// prepare returns the statement of query, preparing and keeping it if the
// cache does not hold it; bounded says the cache's bound applies (nil and
// no error past it).
func (c *StmtCache) prepare(ctx context.Context, query string, bounded bool) (*sql.Stmt, error) {
	c.mu.RLock()
	st, ok := c.stmts[query]
	refuse := c.closed || bounded && len(c.stmts) >= MaxCachedStmts
	c.mu.RUnlock()
	if ok || refuse {
		return st, nil
	}
	// Prepared outside the lock: it may wait for a connection.
	st, err := c.db.PrepareContext(ctx, query)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if kept, ok := c.stmts[query]; ok {
		_ = st.Close() // a concurrent first use kept its own
		return kept, nil
	}
	if c.closed || bounded && len(c.stmts) >= MaxCachedStmts {
		_ = st.Close()
		return nil, nil
	}
	c.stmts[query] = st
	return st, nil
}

// Len returns how many statements the cache holds.
func (c *StmtCache) Len() int {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return len(c.stmts)
}

// Close closes the cached statements; afterwards Stmt returns nil and the
// statements run unprepared. Call it before closing the pool.
func (c *StmtCache) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.closed = true
	err := CloseAll(c.stmts)
	clear(c.stmts)
	return err
}

// StdDBCached is StdDB running each statement through cache, so that it
// is parsed once per connection rather than on every call.
//
// A cached query (Query, QueryRow) runs once ctx is checked, with ctx's
// values but not its cancellation: a query given a context that can end
// costs database/sql and the SQLite driver a goroutine each watching it
// (and the driver a progress handler), a good part of a point read. The
// cache holds the stores' fixed reads; those that return many rows (an
// aggregate's load, a page of the log, a scan of IDs or snapshots) look at
// ctx between rows (rowsCancelled), so cancellation ends them at a row, not within one.
// While SQLite waits for a lock another process holds, the wait is not
// cut short either: it lasts up to the busy timeout. Exec, and a query
// run unprepared (see Unprepared: translated queries, which may scan a
// whole table before their first row), keep ctx's cancellation.
func StdDBCached(db *sql.DB, cache *StmtCache) Executor {
	return stdDBCached{stdDB: stdDB{db}, cache: cache}
}

// StdTxCached is StdTx running a statement cache holds as that prepared
// statement, bound to the transaction. cache's pool must be tx's.
func StdTxCached(tx *sql.Tx, cache *StmtCache) Executor {
	return stdTxCached{tx: tx, cache: cache}
}

type stdDBCached struct {
	stdDB
	cache *StmtCache
}

// uncached is implemented by executors that keep statements prepared,
// returning the same executor running every statement unprepared.
type uncached interface {
	uncached() Executor
}

func (e stdDBCached) uncached() Executor { return e.stdDB }

// Unprepared returns e running every statement unprepared, or e itself
// when it keeps no statements: for statements whose text is built per
// call (translated queries), which would fill a statement cache with
// texts that may never run again.
func Unprepared(e Executor) Executor {
	if u, ok := e.(uncached); ok {
		return u.uncached()
	}
	return e
}

func (e stdDBCached) Exec(ctx context.Context, query string, args ...any) (int64, error) {
	if st := e.cache.Stmt(ctx, query); st != nil {
		return affected(st.ExecContext(ctx, args...))
	}
	return e.stdDB.Exec(ctx, query, args...)
}

func (e stdDBCached) Query(ctx context.Context, query string, args ...any) (Rows, error) {
	st := e.cache.Stmt(ctx, query)
	if st == nil {
		return e.stdDB.Query(ctx, query, args...)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	rows, err := st.QueryContext(context.WithoutCancel(ctx), args...)
	if err != nil {
		return nil, err
	}
	return stdRows{rows}, nil
}

func (e stdDBCached) QueryRow(ctx context.Context, query string, args ...any) Row {
	if st := e.cache.Stmt(ctx, query); st != nil {
		if ctx.Err() != nil {
			// A Row carrying ctx's error: the statement does not run.
			return st.QueryRowContext(ctx, args...)
		}
		return st.QueryRowContext(context.WithoutCancel(ctx), args...)
	}
	return e.stdDB.QueryRow(ctx, query, args...)
}

type stdTxCached struct {
	tx    *sql.Tx
	cache *StmtCache
}

// stmt returns the cached statement of query bound to the transaction, or
// nil.
func (e stdTxCached) stmt(ctx context.Context, query string) *sql.Stmt {
	if st := e.cache.Stmt(ctx, query); st != nil {
		return e.tx.StmtContext(ctx, st)
	}
	return nil
}

func (e stdTxCached) Exec(ctx context.Context, query string, args ...any) (int64, error) {
	if st := e.stmt(ctx, query); st != nil {
		return affected(st.ExecContext(ctx, args...))
	}
	return affected(e.tx.ExecContext(ctx, query, args...))
}

func (e stdTxCached) Query(ctx context.Context, query string, args ...any) (Rows, error) {
	var rows *sql.Rows
	var err error
	if st := e.stmt(ctx, query); st != nil {
		rows, err = st.QueryContext(ctx, args...)
	} else {
		rows, err = e.tx.QueryContext(ctx, query, args...)
	}
	if err != nil {
		return nil, err
	}
	return stdRows{rows}, nil
}

func (e stdTxCached) QueryRow(ctx context.Context, query string, args ...any) Row {
	if st := e.stmt(ctx, query); st != nil {
		return st.QueryRowContext(ctx, args...)
	}
	return e.tx.QueryRowContext(ctx, query, args...)
}
