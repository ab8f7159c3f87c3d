package sqlquery_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/query"
	"github.com/factum-go/factum/query/querytest"
	"github.com/factum-go/factum/query/sqlquery"
)

// backend runs statements against one real database table.
type backend interface {
	// rows runs a Find statement and returns whole documents.
	rows(ctx context.Context, st sqlquery.Statement) ([]query.Document, error)
	// count runs a Count statement.
	count(ctx context.Context, st sqlquery.Statement) (int64, error)
}

// evaluator answers the corpus from SQL: plan, translate, run, project.
type evaluator struct {
	t       *testing.T
	planner query.Planner
	tr      *sqlquery.Translator
	table   string
	columns []string
	scope   sqlquery.Statement
	db      backend
}

func (e evaluator) find(ctx context.Context, plan query.Plan) ([]query.Document, error) {
	st, err := e.tr.Find(plan, e.table, e.columns, e.scope)
	if err != nil {
		return nil, err
	}
	docs, err := e.db.rows(ctx, st)
	if err != nil {
		e.t.Errorf("the database refused the SQL: %v\n%s\nargs %v", err, st.SQL, st.Args)
		return nil, err
	}
	for i, d := range docs {
		docs[i] = plan.Projection.Apply(d)
	}
	return docs, nil
}

func (e evaluator) Single(ctx context.Context, q query.Query) (query.Document, error) {
	plan, err := e.planner.Single(q)
	if err != nil {
		return nil, err
	}
	docs, err := e.find(ctx, plan)
	if err != nil {
		return nil, err
	}
	if len(docs) == 0 {
		return nil, factum.NotFound("no document")
	}
	return docs[0], nil
}

func (e evaluator) List(ctx context.Context, q query.Query) ([]query.Document, error) {
	plan, err := e.planner.List(q)
	if err != nil {
		return nil, err
	}
	return e.find(ctx, plan)
}

func (e evaluator) Paged(ctx context.Context, q query.PagedQuery) (query.Paged[query.Document], error) {
	plan, err := e.planner.Paged(q)
	if err != nil {
		return query.Paged[query.Document]{}, err
	}
	total, err := e.Count(ctx, q.Condition)
	if err != nil {
		return query.Paged[query.Document]{}, err
	}
	docs, err := e.find(ctx, plan)
	if err != nil {
		return query.Paged[query.Document]{}, err
	}
	return query.Paged[query.Document]{Total: total, List: docs}, nil
}

func (e evaluator) Count(ctx context.Context, c query.Condition) (int64, error) {
	cond, err := e.planner.Count(c)
	if err != nil {
		return 0, err
	}
	st, err := e.tr.Count(cond, e.table, e.scope)
	if err != nil {
		return 0, err
	}
	n, err := e.db.count(ctx, st)
	if err != nil {
		e.t.Errorf("the database refused the SQL: %v\n%s\nargs %v", err, st.SQL, st.Args)
	}
	return n, err
}

func corpusPlanner(data querytest.Data) query.Planner {
	return query.Planner{Now: func() time.Time { return data.Now }, Location: data.Location}
}

// snapshotRow is a corpus document split into the snapshot columns.
type snapshotRow struct {
	AggregateID    string          `json:"aggregateId"`
	TenantID       string          `json:"tenantId"`
	OwnerID        string          `json:"ownerId"`
	Version        int64           `json:"version"`
	EventID        string          `json:"eventId"`
	FirstOperator  string          `json:"firstOperator"`
	Operator       string          `json:"operator"`
	FirstEventTime int64           `json:"firstEventTime"`
	EventTime      int64           `json:"eventTime"`
	SnapshotTime   int64           `json:"snapshotTime"`
	Deleted        bool            `json:"deleted"`
	State          json.RawMessage `json:"state"`
}

func splitRows(t *testing.T, data querytest.Data) []snapshotRow {
	t.Helper()
	rows := make([]snapshotRow, len(data.JSON))
	for i, raw := range data.JSON {
		if err := json.Unmarshal(raw, &rows[i]); err != nil {
			t.Fatal(err)
		}
	}
	return rows
}

// snapshotColumns are the columns Find selects from the snapshot table.
var snapshotColumns = []string{"aggregate_id", "tenant_id", "owner_id", "version", "event_id", "first_operator",
	"operator", "first_event_time", "event_time", "snapshot_time", "deleted", "state"}

// document rebuilds the query document of a snapshot row.
func (r snapshotRow) document() (query.Document, error) {
	state, err := query.ParseDocument([]byte(`{"s":`+string(r.State)+`}`), true)
	if err != nil {
		return nil, err
	}
	n := func(v int64) json.Number { return json.Number(fmt.Sprint(v)) }
	return query.Document{
		"aggregateId": r.AggregateID, "tenantId": r.TenantID, "ownerId": r.OwnerID, "version": n(r.Version),
		"eventId": r.EventID, "firstOperator": r.FirstOperator, "operator": r.Operator,
		"firstEventTime": n(r.FirstEventTime), "eventTime": n(r.EventTime), "snapshotTime": n(r.SnapshotTime),
		"deleted": r.Deleted, "state": state["s"],
	}, nil
}

// rowScanner is what the rows of both drivers (database/sql, pgx) have.
type rowScanner interface {
	Next() bool
	Scan(dest ...any) error
	Err() error
}

// readDocuments reads every row: one column holding the whole document
// when document is set, the snapshot columns otherwise.
func readDocuments(rows rowScanner, document bool) ([]query.Document, error) {
	docs := []query.Document{}
	for rows.Next() {
		var d query.Document
		var err error
		if document {
			var raw []byte
			if err := rows.Scan(&raw); err != nil {
				return nil, err
			}
			d, err = query.ParseDocument(raw, true)
		} else {
			var r snapshotRow
			var state []byte // json.RawMessage is not a type database/sql scans into
			if err := rows.Scan(&r.AggregateID, &r.TenantID, &r.OwnerID, &r.Version, &r.EventID, &r.FirstOperator,
				&r.Operator, &r.FirstEventTime, &r.EventTime, &r.SnapshotTime, &r.Deleted, &state); err != nil {
				return nil, err
			}
			r.State = state
			d, err = r.document()
		}
		if err != nil {
			return nil, err
		}
		docs = append(docs, d)
	}
	return docs, rows.Err()
}

// documentSchema keeps each whole document in one JSON column.
func documentSchema() sqlquery.Schema {
	return sqlquery.Schema{Alias: "d", Document: "doc"}
}
