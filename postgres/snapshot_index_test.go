package postgres

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
	"github.com/factum-go/factum/internal/servicetest"
	"github.com/factum-go/factum/query"
	"github.com/factum-go/factum/snapshot"
)

// The indexes SnapshotStore's documentation recommends, verbatim.
var documentedIndexes = map[string]string{
	"factum_shop_snapshots_status": `CREATE INDEX factum_shop_snapshots_status ON factum_shop_snapshots (aggregate,
	  (CASE WHEN jsonb_typeof(state -> 'status') = 'string' THEN state -> 'status' #>> '{}' END));`,
	"factum_shop_snapshots_status_c": `CREATE INDEX factum_shop_snapshots_status_c ON factum_shop_snapshots (aggregate,
	  (CASE WHEN jsonb_typeof(state -> 'status') = 'string' THEN state -> 'status' #>> '{}' END) COLLATE "C");`,
	"factum_shop_snapshots_total": `CREATE INDEX factum_shop_snapshots_total ON factum_shop_snapshots (aggregate,
	  (CASE WHEN jsonb_typeof(state -> 'total') = 'number' THEN (state -> 'total')::float8 END));`,
	"factum_shop_snapshots_event_time": `CREATE INDEX factum_shop_snapshots_event_time ON factum_shop_snapshots (aggregate, event_time DESC, aggregate_id);`,
}

// TestSnapshotIndexesServeQueries creates the documented indexes and checks
// with EXPLAIN that PostgreSQL uses each for the statement Find runs: the
// expression indexes for filters on state fields, the column index for a
// sort that then needs no sorting step.
func TestSnapshotIndexesServeQueries(t *testing.T) {
	ctx := context.Background()
	url, schema := servicetest.PostgresSchema(t)
	db, err := Open(ctx, url, Options{Schema: schema})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	st, err := NewSnapshotStore(ctx, db, "shop")
	if err != nil {
		t.Fatal(err)
	}
	orders := factum.NamedAggregate{Context: "shop", Aggregate: "order"}
	const n = 5000
	var next atomic.Int64
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for i := int(next.Add(1)) - 1; i < n; i = int(next.Add(1)) - 1 {
				_, err := st.Save(ctx, snapshot.Snapshot{
					AggregateID: orders.WithID(fmt.Sprintf("o-%04d", i)), Version: 1,
					EventTime: time.UnixMilli(int64(1_700_000_000_000 + i*1000)),
					State:     json.RawMessage(fmt.Sprintf(`{"status":"s%d","total":%d}`, i%2500, i)),
				})
				if err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	for _, ddl := range documentedIndexes {
		if _, err := db.Pool().Exec(ctx, ddl); err != nil {
			t.Fatalf("%s: %v", ddl, err)
		}
	}
	if _, err := db.Pool().Exec(ctx, "ANALYZE factum_shop_snapshots"); err != nil {
		t.Fatal(err)
	}
	svc, err := snapshot.NewQueryService(st, orders, query.Planner{})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name  string
		q     query.Query
		index string
		found int
	}{
		{"string equality", query.Query{Condition: query.Eq("state.status", "s7")}, "factum_shop_snapshots_status", 2},
		{"string range", query.Query{Condition: query.Gt("state.status", "s998")}, "factum_shop_snapshots_status_c", 2},
		{"number range", query.Query{Condition: query.Gt("state.total", n-6)}, "factum_shop_snapshots_total", 5},
		{"sort by event time", query.Query{Sort: []query.Sort{query.SortDesc("eventTime")}, Limit: 20}, "factum_shop_snapshots_event_time", 20},
	} {
		t.Run(c.name, func(t *testing.T) {
			plan, err := query.Planner{}.List(c.q)
			if err != nil {
				t.Fatal(err)
			}
			stmt, err := st.core.FindStatement(orders, plan)
			if err != nil {
				t.Fatal(err)
			}
			rows, err := db.Pool().Query(ctx, "EXPLAIN "+stmt.SQL, stmt.Args...)
			if err != nil {
				t.Fatal(err)
			}
			var steps []string
			for rows.Next() {
				var line string
				if err := rows.Scan(&line); err != nil {
					t.Fatal(err)
				}
				steps = append(steps, line)
			}
			rows.Close()
			if err := rows.Err(); err != nil {
				t.Fatal(err)
			}
			explained := strings.Join(steps, "\n")
			if !strings.Contains(explained, " "+c.index+" ") {
				t.Errorf("the plan does not use %s:\n%s\nfor %s", c.index, explained, stmt.SQL)
			}
			if len(c.q.Sort) > 0 && strings.Contains(explained, "Sort") {
				t.Errorf("the sort index still needs a sorting step:\n%s", explained)
			}
			list, err := svc.List(ctx, c.q)
			if err != nil || len(list) != c.found {
				t.Errorf("List found %d, %v; want %d", len(list), err, c.found)
			}
		})
	}
}
