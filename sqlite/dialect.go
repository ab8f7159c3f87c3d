package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"time"
	"unicode/utf8"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/event"
	"github.com/factum-go/factum/internal/sqlstore"
	"github.com/factum-go/factum/query/sqlquery"
)

// dialect is SQLite's for the shared SQL code.
var dialect = sqlstore.Dialect{
	Name:   "sqlite",
	Param:  sqlstore.Numbered("?"),
	NoRows: func(err error) bool { return errors.Is(err, sql.ErrNoRows) },
	// TEXT, not BLOB: SQLite reads a BLOB as its binary JSONB.
	JSON: func(doc []byte) any { return string(doc) },
	Time: func(t time.Time) any { return t.UnixMicro() },
	// SQLite would store text that is not UTF-8; it is refused so that
	// both SQL backends answer alike.
	CheckText: func(what, s string) error {
		if !utf8.ValidString(s) {
			return factum.IllegalArgument(what + " is not valid UTF-8")
		}
		return nil
	},
	Stamp:        time.Now,
	Query:        sqlquery.SQLite(),
	ValidContext: func(c string) error { return factum.ValidateName("context", c) },
}

// reads is the shared code's Executor over db's reader pool, nil for a
// nil db. Its statements are prepared on first use and kept (DB's
// readStmts). Every call returns an equal Executor, which tells the shared
// code that two stores are of one database.
func (d *DB) reads() sqlstore.Executor {
	if d == nil {
		return nil
	}
	return sqlstore.StdDBCached(d.reader, d.readStmts)
}

// projections is how projection transactions and reads run on db: the
// transactions on the write connection, the reads on the reader pool; the
// zero config for a nil db, which the shared set-up refuses.
func (d *DB) projections() sqlstore.ProjectionsConfig {
	if d == nil {
		return sqlstore.ProjectionsConfig{}
	}
	return sqlstore.ProjectionsConfig{Reader: d.reads(), Begin: sqlstore.StdBegin(d.writer, d.writeStmts), Read: sqlstore.StdRead(d.reader)}
}

// migrator is db as the shared set-up takes it, nil for a nil db.
func (d *DB) migrator() sqlstore.Migrator { return sqlstore.MigratorOf(d) }

// writes runs fn in a write transaction of the DB's batcher, shared with
// the writes queued with it. A statement prepared on the write connection
// by prepareWrites, by any store of the DB, runs prepared.
func (d *DB) writes() sqlstore.WriteFunc {
	return func(ctx context.Context, fn func(context.Context, sqlstore.Executor) error) error {
		return d.batch.do(&batchWrite{ctx: ctx, apply: func(ctx context.Context, tx *sql.Tx) error {
			return fn(ctx, sqlstore.StdTxCached(tx, d.writeStmts))
		}})
	}
}

// prepareWrites prepares queries on the write connection for every
// transaction of the DB (writes, projections). It is called when a store
// is made, outside any transaction: inside one, the writer's only
// connection is taken.
func (d *DB) prepareWrites(ctx context.Context, queries ...string) error {
	for _, q := range queries {
		if _, err := d.writeStmts.Prepare(ctx, q); err != nil {
			return err
		}
	}
	return nil
}

// The shared implementations, embedded in the stores under names of their
// own, so that each store has the methods of the interface and no more.
type (
	checkpointStore = event.CheckpointStore
	leases          = sqlstore.Leases
)
