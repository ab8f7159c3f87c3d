package sqlquery_test

import (
	"fmt"

	"github.com/factum-go/factum/query"
	"github.com/factum-go/factum/query/sqlquery"
)

func Example() {
	plan, _ := query.Planner{}.List(query.Query{
		Condition: query.And(query.Tenant("acme"), query.Gte("state.total", 100)),
		Sort:      []query.Sort{query.SortDesc("version")},
		Limit:     10,
	})
	for _, d := range []sqlquery.Dialect{sqlquery.SQLite(), sqlquery.PostgreSQL()} {
		tr, _ := sqlquery.New(d, sqlquery.SnapshotSchema())
		st, _ := tr.Find(plan, "snapshots", []string{"aggregate_id", "state"}, sqlquery.Statement{})
		fmt.Println(d, st.Args)
		fmt.Println(st.SQL)
	}
	// Output:
	// sqlite [acme 100 10 0]
	// SELECT t.aggregate_id, t.state FROM snapshots AS t WHERE ((t.tenant_id = ?) AND ((CASE WHEN json_type(t.state, '$."total"') IN ('integer', 'real') THEN json_extract(t.state, '$."total"') END) >= ?) AND (NOT (t.deleted IS 1))) ORDER BY t.version DESC, t.aggregate_id ASC LIMIT ? OFFSET ?
	// postgresql [acme 100 10 0]
	// SELECT t.aggregate_id, t.state FROM snapshots AS t WHERE ((t.tenant_id = $1::text) AND ((CASE WHEN jsonb_typeof(t.state -> 'total') = 'number' THEN (t.state -> 'total')::float8 END) >= $2::float8) AND (NOT (t.deleted IS TRUE))) ORDER BY t.version DESC, t.aggregate_id COLLATE "C" ASC LIMIT $3 OFFSET $4
}
