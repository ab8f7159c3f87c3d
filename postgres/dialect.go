package postgres

import (
	"errors"
	"time"

	"github.com/factum-go/factum/event"
	"github.com/factum-go/factum/internal/sqlstore"
	"github.com/factum-go/factum/internal/sqlstore/pgxexec"
	"github.com/factum-go/factum/query/sqlquery"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// dialect is PostgreSQL's for the shared SQL code.
var dialect = sqlstore.Dialect{
	Name:           "postgres",
	Param:          sqlstore.Numbered("$"),
	NoRows:         func(err error) bool { return errors.Is(err, pgx.ErrNoRows) },
	JSON:           func(doc []byte) any { return doc },
	Time:           func(t time.Time) any { return t },
	CheckText:      esCheckText,
	StrictText:     true,
	LowerCaseNames: true,
	Query:          sqlquery.PostgreSQL(),
	ValidContext:   validTableContext,
	DataError: func(err error) bool {
		// SQLSTATE class 22, a data exception: the value, not the
		// database, is at fault.
		var pgErr *pgconn.PgError
		return errors.As(err, &pgErr) && len(pgErr.Code) == 5 && pgErr.Code[:2] == "22"
	},
}

// migrator is db as the shared set-up takes it, nil for a nil db.
func (d *DB) migrator() sqlstore.Migrator { return sqlstore.MigratorOf(d) }

// projections is how projection transactions and reads run on db, all on
// its pool, the rows of the transactions locked; the zero config for a nil
// db, which the shared set-up refuses.
func (d *DB) projections() sqlstore.ProjectionsConfig {
	if d == nil {
		return sqlstore.ProjectionsConfig{}
	}
	return sqlstore.ProjectionsConfig{Lock: true, Reader: pgxexec.New(d.pool), Begin: pgxexec.Begin(d.pool), Read: pgxexec.Read(d.pool)}
}

// executor is the shared code's Executor over the pool of db, nil for a
// nil db.
func (d *DB) executor() sqlstore.Executor {
	if d == nil {
		return nil
	}
	return pgxexec.New(d.pool)
}

// The shared implementations, embedded in the stores under names of their
// own, so that each store has the methods of the interface and no more.
type (
	checkpointStore = event.CheckpointStore
	leases          = sqlstore.Leases
)
