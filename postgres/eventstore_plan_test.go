package postgres

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
)

// The append statements and the refusal classifier, planned as the store's
// writers plan them (generic plans, made once per connection) while the
// table is empty, must probe the indexes per row: never scan the table, never
// hash a subplan over it, and look a predecessor up in the version index.
// A plan made on an empty table is kept as the table grows, so a scan here
// would make every append read the whole table.
func TestEventStorePlansProbeTheIndex(t *testing.T) {
	db := newTestDB(t, 4)
	st := newTestEventStore(t, db, "shop", EventStoreOptions{})
	ctx := context.Background()
	pc, err := db.Pool().Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	conn := pc.Hijack() // its settings and statements must not go back to the pool
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, `SET plan_cache_mode = force_generic_plan`); err != nil {
		t.Fatal(err)
	}

	// A batch of n rows, as the arrays the insert unnests.
	rows := func(n int) string {
		col := func(v string) string { return "ARRAY[" + strings.TrimSuffix(strings.Repeat(v+", ", n), ", ") + "]" }
		return strings.Join([]string{col("'cart'"), col("'a'"), col("'default'"), col("2"), col("'s'"), col("'c'"),
			col("'r'"), col("''"), col("''"), col("now()"), col("'[]'")}, ", ")
	}
	cases := []struct {
		name, sql, args string
		probes          map[string]string // index wanted per probe alias; "" any
	}{
		{"insert one", st.q.insert.one, `'cart', 'a', 'default', 2, 's', 'c', 'r', '', '', now(), '[]'`, nil},
		{"insert 1", st.q.insert.plain, rows(1), nil},
		{"insert 8", st.q.insert.plain, rows(8), nil},
		{"insert 200", st.q.insert.plain, rows(200), nil},
		{"insert 8 on conflict", st.q.insert.orSkip, rows(8), nil},
		{"classify", st.q.classify, `'{cart,cart}', '{a,b}', '{r,s}', '{2,3}'`, nil},
	}
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			indexes := probesOnly(t, conn, fmt.Sprintf("plan_test_%d", i), c.sql, c.args, "streams")
			if strings.HasPrefix(c.name, "insert") {
				if len(indexes) != 1 || indexes[0] != "streams_ver" {
					t.Errorf("the predecessor is looked up in %v, want [streams_ver]", indexes)
				}
			}
		})
	}
}

// probesOnly prepares sql as name on conn, explains its execution with args
// (a SQL argument list) and fails the test if the plan scans a table whose
// name contains table or hashes a subplan. It returns the indexes the plan
// reads, without the factum_shop_ prefix.
func probesOnly(t *testing.T, conn *pgx.Conn, name, sql, args, table string) []string {
	t.Helper()
	ctx := context.Background()
	if _, err := conn.Exec(ctx, `PREPARE `+name+` AS `+sql); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _, _ = conn.Exec(context.Background(), `DEALLOCATE `+name) })
	var out []byte
	if err := conn.QueryRow(ctx, `EXPLAIN (FORMAT JSON) EXECUTE `+name+`(`+args+`)`).Scan(&out); err != nil {
		t.Fatal(err)
	}
	var plans []struct{ Plan planNode }
	if err := json.Unmarshal(out, &plans); err != nil || len(plans) != 1 {
		t.Fatalf("explain: %v, %s", err, out)
	}
	var indexes []string
	plans[0].Plan.walk(func(n *planNode) {
		switch {
		case n.Type == "Seq Scan" && strings.Contains(n.Relation, table):
			t.Errorf("the plan scans %s:\n%s", n.Relation, out)
		case strings.HasPrefix(n.Subplan, "hashed"):
			t.Errorf("the plan hashes a subplan (%s):\n%s", n.Subplan, out)
		case n.Index != "":
			indexes = append(indexes, strings.TrimPrefix(n.Index, "factum_shop_"))
		}
	})
	return indexes
}

// planNode is the part of an EXPLAIN (FORMAT JSON) node the test reads.
type planNode struct {
	Type     string     `json:"Node Type"`
	Relation string     `json:"Relation Name"`
	Index    string     `json:"Index Name"`
	Subplan  string     `json:"Subplan Name"`
	Plans    []planNode `json:"Plans"`
}

func (n *planNode) walk(fn func(*planNode)) {
	fn(n)
	for i := range n.Plans {
		n.Plans[i].walk(fn)
	}
}
