package sqlstore

import (
	"context"

	"strconv"
	"time"

	"github.com/factum-go/factum/query/sqlquery"
)

// Row is one row of a query: the driver's own (*sql.Row, pgx.Row), so a
// missing row is the driver's no-rows error, which Dialect.NoRows
// recognises.
type Row interface {
	Scan(dest ...any) error
}

// Rows is the result of a query, read row by row; Close may be called
// more than once.
type Rows interface {
	Next() bool
	Scan(dest ...any) error
	Err() error
	Close()
}

// Executor runs statements: a pool, a connection or a transaction of
// either driver. It is all the shared code needs of a database.
type Executor interface {
	// Exec runs a statement and returns the number of rows it affected.
	Exec(ctx context.Context, query string, args ...any) (int64, error)
	// Query runs a statement returning rows.
	Query(ctx context.Context, query string, args ...any) (Rows, error)
	// QueryRow runs a statement returning at most one row.
	QueryRow(ctx context.Context, query string, args ...any) Row
}

// WriteFunc runs fn where a backend runs its writes: SQLite in a
// transaction on its single write connection (shared with concurrent
// writes), PostgreSQL on the pool. fn's error fails the write; fn keeps its
// outcome in its closure.
type WriteFunc func(ctx context.Context, fn func(ctx context.Context, ex Executor) error) error

// Dialect is what the shared statements and code need to know of one SQL
// database: how it spells parameters, binds values and reports errors.
type Dialect struct {
	// Name starts every error message ("sqlite", "postgres").
	Name string
	// Param is the placeholder of the n-th argument, counted from 1.
	Param func(n int) string
	// NoRows reports whether err is the driver's "no rows" error.
	NoRows func(err error) bool
	// JSON binds a JSON document for a column of the snapshot state.
	JSON func(doc []byte) any
	// Time binds a stream's create time.
	Time func(t time.Time) any
	// CheckText refuses, as IllegalArgument, a string the database's text
	// columns cannot hold; what names it in the message.
	CheckText func(what, s string) error
	// Query is the dialect of the snapshot queries' translator.
	Query sqlquery.Dialect
	// ValidContext refuses, as IllegalArgument, a bounded context's name
	// the database cannot name tables after.
	ValidContext func(boundedContext string) error
	// StrictText says the database refuses text CheckText refuses
	// wherever it is stored, snapshots included, so the shared code checks
	// snapshots before their statements too.
	StrictText bool
	// LowerCaseNames says unquoted identifiers fold to lower case, so
	// table prefixes must be lower case: the names the migrations create
	// and the ones the queries use are then equal.
	LowerCaseNames bool
	// DataError reports whether err is the database refusing a value
	// rather than failing; nil means it never says so apart.
	DataError func(err error) bool
	// Stamp, when set, is the clock whose milliseconds the checkpoint
	// upsert binds as its last argument; when nil the database stamps the
	// row itself.
	Stamp func() time.Time
}

// Numbered returns the placeholder function of "?1"-style parameters
// (SQLite) or "$1"-style ones (PostgreSQL), given the sign.
func Numbered(sign string) func(n int) string {
	return func(n int) string { return sign + strconv.Itoa(n) }
}

// params returns d's placeholders from..to, comma separated.
func (d *Dialect) params(from, to int) string {
	s := ""
	for n := from; n <= to; n++ {
		if n > from {
			s += ", "
		}
		s += d.Param(n)
	}
	return s
}
