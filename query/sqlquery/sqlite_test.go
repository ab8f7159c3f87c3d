package sqlquery_test

import (
	"context"
	"database/sql"
	"path/filepath"
	"testing"

	"github.com/factum-go/factum/query"
	"github.com/factum-go/factum/query/querytest"
	"github.com/factum-go/factum/query/sqlquery"
	_ "modernc.org/sqlite" // registers the "sqlite" driver
)

type sqliteBackend struct {
	db       *sql.DB
	document bool // rows hold one doc column; otherwise the snapshot columns
}

func (b sqliteBackend) rows(ctx context.Context, st sqlquery.Statement) ([]query.Document, error) {
	rows, err := b.db.QueryContext(ctx, st.SQL, st.Args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	return readDocuments(rows, b.document)
}

func (b sqliteBackend) count(ctx context.Context, st sqlquery.Statement) (int64, error) {
	var n int64
	err := b.db.QueryRowContext(ctx, st.SQL, st.Args...).Scan(&n)
	return n, err
}

// sqliteDB is a throw-away database; the driver is opened directly so
// that these tests depend on no other factum package.
type sqliteDB struct{ db *sql.DB }

func (d sqliteDB) Writer() *sql.DB { return d.db }
func (d sqliteDB) Reader() *sql.DB { return d.db }

func openSQLite(t *testing.T) sqliteDB {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+filepath.Join(t.TempDir(), "query.db"))
	if err != nil {
		t.Fatal(err)
	}
	db.SetMaxOpenConns(1)
	t.Cleanup(func() { db.Close() })
	return sqliteDB{db}
}

func mustExec(t *testing.T, db *sql.DB, q string, args ...any) {
	t.Helper()
	if _, err := db.ExecContext(context.Background(), q, args...); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
}

// TestSQLiteCorpusColumns runs the corpus on SQLite over a snapshot table
// with one column per standard field and the state as JSON text, scoped
// to one aggregate type among others.
func TestSQLiteCorpusColumns(t *testing.T) {
	querytest.Run(t, func(t *testing.T, data querytest.Data) querytest.Evaluator {
		db := openSQLite(t)
		mustExec(t, db.Writer(), `CREATE TABLE snaps (aggregate TEXT NOT NULL, aggregate_id TEXT NOT NULL, tenant_id TEXT NOT NULL,
			owner_id TEXT NOT NULL, version INTEGER NOT NULL, event_id TEXT NOT NULL, first_operator TEXT NOT NULL,
			operator TEXT NOT NULL, first_event_time INTEGER NOT NULL, event_time INTEGER NOT NULL,
			snapshot_time INTEGER NOT NULL, deleted INTEGER NOT NULL, state TEXT NOT NULL,
			PRIMARY KEY (aggregate, aggregate_id))`)
		for _, aggregate := range []string{"kit", "other"} {
			for _, r := range splitRows(t, data) {
				mustExec(t, db.Writer(), `INSERT INTO snaps VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
					aggregate, r.AggregateID, r.TenantID, r.OwnerID, r.Version, r.EventID, r.FirstOperator, r.Operator,
					r.FirstEventTime, r.EventTime, r.SnapshotTime, r.Deleted, string(r.State))
			}
		}
		// The other aggregate type's copies differ, so a lost scope shows.
		mustExec(t, db.Writer(), `UPDATE snaps SET deleted = 1 - deleted WHERE aggregate = 'other'`)
		tr, err := sqlquery.New(sqlquery.SQLite(), sqlquery.SnapshotSchema())
		if err != nil {
			t.Fatal(err)
		}
		return evaluator{t: t, planner: corpusPlanner(data), tr: tr, table: "snaps", columns: snapshotColumns,
			scope: sqlquery.Statement{SQL: "t.aggregate = ?", Args: []any{"kit"}},
			db:    sqliteBackend{db: db.Reader()}}
	})
}

// TestSQLiteCorpusDocument runs the corpus on SQLite over a table holding
// each document whole in one JSON text column.
func TestSQLiteCorpusDocument(t *testing.T) {
	querytest.Run(t, func(t *testing.T, data querytest.Data) querytest.Evaluator {
		db := openSQLite(t)
		mustExec(t, db.Writer(), `CREATE TABLE docs (doc TEXT NOT NULL)`)
		for _, raw := range data.JSON {
			mustExec(t, db.Writer(), `INSERT INTO docs VALUES (?)`, string(raw))
		}
		tr, err := sqlquery.New(sqlquery.SQLite(), documentSchema())
		if err != nil {
			t.Fatal(err)
		}
		return evaluator{t: t, planner: corpusPlanner(data), tr: tr, table: "docs", columns: []string{"doc"},
			db: sqliteBackend{db: db.Reader(), document: true}}
	})
}
