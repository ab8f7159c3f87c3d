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
// nil db.
func (d *DB) reads() sqlstore.Executor {
	if d == nil {
		return nil
	}
	return sqlstore.StdDB(d.reader)
}

// migrator is db as the shared set-up takes it, nil for a nil db.
func (d *DB) migrator() sqlstore.Migrator {
	if d == nil {
		return nil
	}
	return d
}

// writes runs fn in a write transaction of the DB's batcher, shared with
// the writes queued with it; prepared are the statements prepared on the
// write connection.
func (d *DB) writes(prepared map[string]*sql.Stmt) sqlstore.WriteFunc {
	return func(ctx context.Context, fn func(context.Context, sqlstore.Executor) error) error {
		return d.batch.do(&batchWrite{ctx: ctx, apply: func(ctx context.Context, tx *sql.Tx) error {
			return fn(ctx, sqlstore.StdTx(tx, prepared))
		}})
	}
}

// The shared implementations, embedded in the stores under names of their
// own, so that each store has the methods of the interface and no more.
type (
	checkpointStore = event.CheckpointStore
)
