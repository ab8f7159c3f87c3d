// Package sqlstore is the one implementation of factum's SQL stores that
// SQLite (package sqlite) and PostgreSQL (package postgres) share: the
// snapshot store (save, load, find, count), the checkpoint and projection
// stores (with projection transactions and reads over database/sql and,
// in pgxexec, pgx), the lease methods around each dialect's lease
// statements, the idempotency store's owner transitions, set-up and purge,
// the prepare backends' set-up, the event store's row codec, its reads of
// an aggregate's streams and of a request, the encoding and closing of
// its group appends, and the group-commit appender that coalesces
// concurrent appends.
//
// It runs over a small Executor (Exec, Query, QueryRow), with adapters for
// database/sql (StdDB, StdTx) and for pgx (package pgxexec, apart so that
// only the PostgreSQL backend links pgx), and a Dialect: how a database
// spells parameters, binds JSON and times, which text it refuses, how it
// reports "no rows" and bad data, and how its tables are named. Where a
// backend writes is a WriteFunc: SQLite's writes share transactions on its
// one write connection, PostgreSQL's go to the pool as they come.
//
// What stays in each backend is what genuinely differs: the append
// statement and its writers (SQLite's single connection and AUTOINCREMENT
// log; PostgreSQL's writer connections, multi-row statements and
// xid8-ordered log, read only below the oldest running transaction so
// that no stream appears later behind a position already read), waiting
// for the log (notifications, polling), the lease statements (judged by
// the application's clock under SQLite's write lock, by clock_timestamp()
// in PostgreSQL), the idempotency claims and the prepare backends, which
// use each database's own locking, and the schemas and their migrations.
//
// The tests every dialect shares live in package sqlstoretest.
package sqlstore
