package sqlstoretest

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/internal/sqlstore"
	"github.com/factum-go/factum/query"
	"github.com/factum-go/factum/query/sqlquery"
	"github.com/factum-go/factum/snapshot"
)

// Indexes is a dialect's check that the snapshot indexes its documentation
// recommends serve the statements Find runs.
type Indexes struct {
	// Store is an empty snapshot store of the context "shop"; Find
	// returns the statement its Find runs.
	Store snapshot.QueryStore
	Find  func(named factum.NamedAggregate, plan query.Plan) (sqlquery.Statement, error)
	// Orders is how many orders are saved, Statuses how many distinct
	// statuses they have (s0, s1, ...): enough for the planner to prefer
	// the indexes, and such that only s999 sorts after s998.
	Orders, Statuses int
	// DDL creates the documented indexes, verbatim, then gathers
	// statistics.
	DDL []string
	// Exec runs the DDL and the EXPLAIN statements.
	Exec sqlstore.Executor
	// Explain starts the statement that explains a query; the step is the
	// last of Columns columns of each row it returns.
	Explain string
	Columns int
	// Uses reports whether the plan reads index; Sorts whether it sorts.
	Uses  func(plan, index string) bool
	Sorts func(plan string) bool
	// RangeIndex is the index that serves ranges on strings.
	RangeIndex string
}

// CheckIndexes creates the indexes over c.Orders orders and checks that
// each plan uses its index: the expression indexes for filters on state
// fields, the column index for a sort that then needs no sorting step.
func CheckIndexes(t *testing.T, c Indexes) {
	ctx := context.Background()
	orders := factum.NamedAggregate{Context: "shop", Aggregate: "order"}
	var next atomic.Int64
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for i := int(next.Add(1)) - 1; i < c.Orders; i = int(next.Add(1)) - 1 {
				_, err := c.Store.Save(ctx, snapshot.Snapshot{
					AggregateID: orders.WithID(fmt.Sprintf("o-%04d", i)), Version: 1,
					EventTime: time.UnixMilli(int64(1_700_000_000_000 + i*1000)),
					State:     json.RawMessage(fmt.Sprintf(`{"status":"s%d","total":%d}`, i%c.Statuses, i)),
				})
				if err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	for _, ddl := range c.DDL {
		if _, err := c.Exec.Exec(ctx, ddl); err != nil {
			t.Fatalf("%s: %v", ddl, err)
		}
	}
	svc, err := snapshot.NewQueryService(c.Store, orders, query.Planner{})
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []struct {
		name  string
		q     query.Query
		index string
		found int
	}{
		{"string equality", query.Query{Condition: query.Eq("state.status", "s7")}, "factum_shop_snapshots_status", c.Orders / c.Statuses},
		{"string range", query.Query{Condition: query.Gt("state.status", "s998")}, c.RangeIndex, c.Orders / c.Statuses},
		{"number range", query.Query{Condition: query.Gt("state.total", c.Orders-6)}, "factum_shop_snapshots_total", 5},
		{"sort by event time", query.Query{Sort: []query.Sort{query.SortDesc("eventTime")}, Limit: 20}, "factum_shop_snapshots_event_time", 20},
	} {
		t.Run(k.name, func(t *testing.T) {
			plan, err := query.Planner{}.List(k.q)
			if err != nil {
				t.Fatal(err)
			}
			stmt, err := c.Find(orders, plan)
			if err != nil {
				t.Fatal(err)
			}
			steps, err := explain(ctx, c, stmt)
			if err != nil {
				t.Fatal(err)
			}
			explained := strings.Join(steps, "\n")
			if !c.Uses(explained, k.index) {
				t.Errorf("the plan does not use %s:\n%s\nfor %s", k.index, explained, stmt.SQL)
			}
			if len(k.q.Sort) > 0 && c.Sorts(explained) {
				t.Errorf("the sort index still needs a sorting step:\n%s", explained)
			}
			list, err := svc.List(ctx, k.q)
			if err != nil || len(list) != k.found {
				t.Errorf("List found %d, %v; want %d", len(list), err, k.found)
			}
		})
	}
}

// explain returns the plan of a statement, one step a line.
func explain(ctx context.Context, c Indexes, stmt sqlquery.Statement) ([]string, error) {
	rows, err := c.Exec.Query(ctx, c.Explain+" "+stmt.SQL, stmt.Args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	cols := make([]any, c.Columns)
	var step string
	for i := range cols {
		cols[i] = new(any)
	}
	cols[len(cols)-1] = &step
	var steps []string
	for rows.Next() {
		if err := rows.Scan(cols...); err != nil {
			return nil, err
		}
		steps = append(steps, step)
	}
	return steps, rows.Err()
}
