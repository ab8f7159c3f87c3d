package sqlquery_test

import (
	"context"
	"testing"

	"github.com/factum-go/factum/internal/servicetest"
	"github.com/factum-go/factum/query"
	"github.com/factum-go/factum/query/querytest"
	"github.com/factum-go/factum/query/sqlquery"
	"github.com/jackc/pgx/v5/pgxpool"
)

type postgresBackend struct {
	pool     *pgxpool.Pool
	document bool
}

func (b postgresBackend) rows(ctx context.Context, st sqlquery.Statement) ([]query.Document, error) {
	rows, err := b.pool.Query(ctx, st.SQL, st.Args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	return readDocuments(rows, b.document)
}

func (b postgresBackend) count(ctx context.Context, st sqlquery.Statement) (int64, error) {
	var n int64
	err := b.pool.QueryRow(ctx, st.SQL, st.Args...).Scan(&n)
	return n, err
}

func openPostgres(t *testing.T) *pgxpool.Pool {
	t.Helper()
	url, schema := servicetest.PostgresSchema(t)
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		t.Fatal(err)
	}
	cfg.ConnConfig.RuntimeParams["search_path"] = schema
	pool, err := pgxpool.NewWithConfig(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	return pool
}

func pgExec(t *testing.T, pool *pgxpool.Pool, q string, args ...any) {
	t.Helper()
	if _, err := pool.Exec(context.Background(), q, args...); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
}

// TestPostgresCorpusColumns runs the corpus on PostgreSQL over a snapshot
// table with one column per standard field and the state in jsonb,
// scoped to one aggregate type among others.
func TestPostgresCorpusColumns(t *testing.T) {
	querytest.Run(t, func(t *testing.T, data querytest.Data) querytest.Evaluator {
		pool := openPostgres(t)
		pgExec(t, pool, `CREATE TABLE snaps (aggregate text NOT NULL, aggregate_id text NOT NULL, tenant_id text NOT NULL,
			owner_id text NOT NULL, version integer NOT NULL, event_id text NOT NULL, first_operator text NOT NULL,
			operator text NOT NULL, first_event_time bigint NOT NULL, event_time bigint NOT NULL,
			snapshot_time bigint NOT NULL, deleted boolean NOT NULL, state jsonb NOT NULL,
			PRIMARY KEY (aggregate, aggregate_id))`)
		for _, aggregate := range []string{"kit", "other"} {
			for _, r := range splitRows(t, data) {
				pgExec(t, pool, `INSERT INTO snaps VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13::jsonb)`,
					aggregate, r.AggregateID, r.TenantID, r.OwnerID, r.Version, r.EventID, r.FirstOperator, r.Operator,
					r.FirstEventTime, r.EventTime, r.SnapshotTime, r.Deleted, string(r.State))
			}
		}
		pgExec(t, pool, `UPDATE snaps SET deleted = NOT deleted WHERE aggregate = 'other'`)
		tr, err := sqlquery.New(sqlquery.PostgreSQL(), sqlquery.SnapshotSchema())
		if err != nil {
			t.Fatal(err)
		}
		return evaluator{t: t, planner: corpusPlanner(data), tr: tr, table: "snaps", columns: snapshotColumns,
			scope: sqlquery.Statement{SQL: "t.aggregate = $1", Args: []any{"kit"}},
			db:    postgresBackend{pool: pool}}
	})
}

// TestPostgresCorpusDocument runs the corpus on PostgreSQL over a table
// holding each document whole in one jsonb column.
func TestPostgresCorpusDocument(t *testing.T) {
	querytest.Run(t, func(t *testing.T, data querytest.Data) querytest.Evaluator {
		pool := openPostgres(t)
		pgExec(t, pool, `CREATE TABLE docs (doc jsonb NOT NULL)`)
		for _, raw := range data.JSON {
			pgExec(t, pool, `INSERT INTO docs VALUES ($1::jsonb)`, string(raw))
		}
		tr, err := sqlquery.New(sqlquery.PostgreSQL(), documentSchema())
		if err != nil {
			t.Fatal(err)
		}
		return evaluator{t: t, planner: corpusPlanner(data), tr: tr, table: "docs", columns: []string{"doc"},
			db: postgresBackend{pool: pool, document: true}}
	})
}
