package sqlquery_test

import (
	"context"
	"errors"
	"math"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/query"
	"github.com/factum-go/factum/query/querytest"
	"github.com/factum-go/factum/query/sqlquery"
)

func translator(t *testing.T, d sqlquery.Dialect, s sqlquery.Schema) *sqlquery.Translator {
	t.Helper()
	tr, err := sqlquery.New(d, s)
	if err != nil {
		t.Fatal(err)
	}
	return tr
}

// TestGoldenSQL pins the SQL of representative conditions in each
// dialect.
func TestGoldenSQL(t *testing.T) {
	lite := translator(t, sqlquery.SQLite(), sqlquery.SnapshotSchema())
	pg := translator(t, sqlquery.PostgreSQL(), sqlquery.SnapshotSchema())
	cases := []struct {
		name     string
		c        query.Condition
		sqlite   string
		postgres string
		args     []any
	}{
		{"eq string column", query.Eq("tenantId", "t1"),
			`COALESCE(t.tenant_id = ?, FALSE)`,
			`COALESCE(t.tenant_id = $3::text, FALSE)`,
			[]any{"t1"}},
		{"eq number in state", query.Eq("state.qty", 10),
			`COALESCE((CASE WHEN json_type(t.state, '$."qty"') IN ('integer', 'real') THEN json_extract(t.state, '$."qty"') END) = ?, FALSE)`,
			`COALESCE((CASE WHEN jsonb_typeof(t.state -> 'qty') = 'number' THEN (t.state -> 'qty')::float8 END) = $3::float8, FALSE)`,
			[]any{10.0}},
		{"ne is not eq", query.Ne("state.a.b", "x"),
			`(NOT COALESCE((CASE WHEN json_type(t.state, '$."a"."b"') = 'text' THEN json_extract(t.state, '$."a"."b"') END) = ?, FALSE))`,
			`(NOT COALESCE((CASE WHEN jsonb_typeof(t.state -> 'a' -> 'b') = 'string' THEN t.state -> 'a' -> 'b' #>> '{}' END) = $3::text, FALSE))`,
			[]any{"x"}},
		{"type mismatch on a column is false", query.Eq("version", "7"), `FALSE`, `FALSE`, nil},
		{"path below a column is missing", query.Null("version.x"), `TRUE`, `TRUE`, nil},
		{"bool column", query.True("deleted"), `(t.deleted IS 1)`, `(t.deleted IS TRUE)`, nil},
		{"null in state", query.Null("state.note"),
			`(COALESCE(json_type(t.state, '$."note"'), 'null') = 'null')`,
			`(COALESCE(jsonb_typeof(t.state -> 'note'), 'null') = 'null')`, nil},
		{"exists false", query.Exists("state.note", false),
			`(NOT (json_type(t.state, '$."note"') IS NOT NULL))`,
			`(NOT (t.state -> 'note' IS NOT NULL))`, nil},
		{"greater string in byte order", query.Gt("ownerId", "m"),
			`COALESCE(t.owner_id > ?, FALSE)`,
			`COALESCE(t.owner_id COLLATE "C" > $3::text, FALSE)`,
			[]any{"m"}},
		{"in numbers", query.In("version", 1, 2),
			`COALESCE(t.version IN (?, ?), FALSE)`,
			`COALESCE((t.version)::float8 = ANY($3::float8[]), FALSE)`,
			nil},
		{"starts with ignoring case", query.StartsWith("aggregateId", "AB").IgnoreCase(),
			`COALESCE(instr(lower(t.aggregate_id), ?) = 1, FALSE)`,
			`COALESCE(starts_with(translate(t.aggregate_id, 'ABCDEFGHIJKLMNOPQRSTUVWXYZ', 'abcdefghijklmnopqrstuvwxyz'), $3::text), FALSE)`,
			[]any{"ab"}},
		{"elem match", query.ElemMatch("state.tags", query.Eq("", "red")),
			`((json_type(t.state, '$."tags"') IS 'array') AND EXISTS (SELECT 1 FROM json_each(t.state, '$."tags"') AS e1 WHERE COALESCE((CASE WHEN json_type(t.state, e1.fullkey) = 'text' THEN json_extract(t.state, e1.fullkey) END) = ?, FALSE)))`,
			`EXISTS (SELECT 1 FROM jsonb_array_elements(CASE WHEN jsonb_typeof(t.state -> 'tags') = 'array' THEN t.state -> 'tags' END) AS e1(v) WHERE COALESCE((CASE WHEN jsonb_typeof(e1.v) = 'string' THEN e1.v #>> '{}' END) = $3::text, FALSE))`,
			[]any{"red"}},
		{"empty or and nor", query.And(query.Or(), query.Nor()), `(FALSE AND TRUE)`, `(FALSE AND TRUE)`, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			sql, args, err := lite.Where(c.c, 0)
			if err != nil {
				t.Fatal(err)
			}
			if sql != c.sqlite {
				t.Errorf("sqlite\n got  %s\n want %s", sql, c.sqlite)
			}
			if c.args != nil && !slices.Equal(args, c.args) {
				t.Errorf("sqlite args = %v, want %v", args, c.args)
			}
			sql, pargs, err := pg.Where(c.c, 2)
			if err != nil {
				t.Fatal(err)
			}
			if sql != c.postgres {
				t.Errorf("postgres\n got  %s\n want %s", sql, c.postgres)
			}
			if len(pargs) > 0 && strings.Count(sql, "$") != strings.Count(sql, "$3") {
				t.Errorf("postgres placeholders do not start after the base: %s", sql)
			}
		})
	}
}

func TestGoldenStatements(t *testing.T) {
	plan, err := query.Planner{}.Paged(query.PagedQuery{
		Condition:  query.Eq("ownerId", "u1"),
		Sort:       []query.Sort{query.SortDesc("state.total")},
		Pagination: query.Pagination{Index: 3, Size: 20},
	})
	if err != nil {
		t.Fatal(err)
	}
	pg := translator(t, sqlquery.PostgreSQL(), sqlquery.SnapshotSchema())
	st, err := pg.Find(plan, "app.snapshots", []string{"aggregate_id", "state"}, sqlquery.Statement{SQL: "t.aggregate = $1", Args: []any{"shop.cart"}})
	if err != nil {
		t.Fatal(err)
	}
	want := `SELECT t.aggregate_id, t.state FROM app.snapshots AS t WHERE (t.aggregate = $1) AND ((t.owner_id = $2::text) AND (NOT (t.deleted IS TRUE)))` +
		` ORDER BY (CASE jsonb_typeof(t.state -> 'total') WHEN 'null' THEN 1 WHEN 'boolean' THEN (CASE WHEN t.state -> 'total' = 'true'::jsonb THEN 3 ELSE 2 END) WHEN 'number' THEN 4 WHEN 'string' THEN 5 WHEN 'array' THEN 6 WHEN 'object' THEN 6 ELSE 0 END) DESC,` +
		` (CASE WHEN jsonb_typeof(t.state -> 'total') = 'number' THEN (t.state -> 'total')::float8 END) DESC,` +
		` (CASE WHEN jsonb_typeof(t.state -> 'total') = 'string' THEN t.state -> 'total' #>> '{}' END) COLLATE "C" DESC,` +
		` t.aggregate_id COLLATE "C" ASC LIMIT $3 OFFSET $4`
	if st.SQL != want {
		t.Errorf("Find\n got  %s\n want %s", st.SQL, want)
	}
	if !slices.Equal(st.Args, []any{"shop.cart", "u1", int64(20), int64(40)}) {
		t.Errorf("Find args = %v", st.Args)
	}
	lite := translator(t, sqlquery.SQLite(), sqlquery.SnapshotSchema())
	cnt, err := lite.Count(plan.Condition, "snapshots", sqlquery.Statement{})
	if err != nil {
		t.Fatal(err)
	}
	if want := `SELECT count(*) FROM snapshots AS t WHERE ((t.owner_id = ?) AND (NOT (t.deleted IS 1)))`; cnt.SQL != want {
		t.Errorf("Count\n got  %s\n want %s", cnt.SQL, want)
	}
	// In a WHERE clause of its own a comparison stays bare (NULL already
	// counts as false, and an index on its expression can serve it),
	// except under a NOT, where NULL must become false first.
	cnt, err = lite.Count(query.Or(query.Eq("ownerId", "u1"), query.Nor(query.Gt("version", 3)), query.NotIn("tenantId", "t1")), "snapshots", sqlquery.Statement{})
	if err != nil {
		t.Fatal(err)
	}
	if want := `SELECT count(*) FROM snapshots AS t WHERE ((t.owner_id = ?) OR (NOT COALESCE(t.version > ?, FALSE)) OR (NOT COALESCE(t.tenant_id IN (?), FALSE)))`; cnt.SQL != want {
		t.Errorf("Count\n got  %s\n want %s", cnt.SQL, want)
	}
}

// TestPlaceholdersMatchArguments translates every corpus query in both
// dialects and checks that the SQL has exactly one placeholder per
// argument, so text and arguments never drift apart.
func TestPlaceholdersMatchArguments(t *testing.T) {
	data := querytest.Dataset()
	planner := corpusPlanner(data)
	for _, d := range []sqlquery.Dialect{sqlquery.SQLite(), sqlquery.PostgreSQL()} {
		for _, schema := range []sqlquery.Schema{sqlquery.SnapshotSchema(), documentSchema()} {
			tr := translator(t, d, schema)
			for _, c := range querytest.Cases() {
				var plan query.Plan
				var err error
				switch c.Kind {
				case querytest.KindList:
					plan, err = planner.List(c.Query)
				case querytest.KindSingle:
					plan, err = planner.Single(c.Query)
				case querytest.KindPaged:
					plan, err = planner.Paged(c.Paged)
				case querytest.KindCount:
					plan.Condition, err = planner.Count(c.Condition)
					plan.Limit = 1
				}
				if err != nil {
					continue // refused by the planner, as the case expects
				}
				st, err := tr.Find(plan, "docs", []string{"doc"}, sqlquery.Statement{})
				if err != nil {
					t.Fatalf("%s %s: %v", d, c.Name, err)
				}
				n := strings.Count(st.SQL, "?")
				if d == sqlquery.PostgreSQL() {
					n = 0
					for i := 1; strings.Contains(st.SQL, "$"+strconv.Itoa(i)); i++ {
						n = i
					}
				}
				if n != len(st.Args) {
					t.Errorf("%s %s: %d placeholders, %d arguments:\n%s", d, c.Name, n, len(st.Args), st.SQL)
				}
			}
		}
	}
}

// TestValuesAreNeverSpliced sends hostile values through every operator
// that takes one: the SQL never contains them, and SQLite runs the
// statements and finds nothing.
func TestValuesAreNeverSpliced(t *testing.T) {
	hostile := `x'); DROP TABLE docs; --`
	conds := []query.Condition{
		query.Eq("state.name", hostile), query.Ne("state.name", hostile), query.Gt("state.name", hostile),
		query.Between("state.name", hostile, hostile+"z"), query.In("state.name", hostile, "other"),
		query.AllIn("state.tags", hostile), query.ElemMatch("state.tags", query.Contains("", hostile)),
		query.Contains("state.name", hostile).IgnoreCase(), query.StartsWith("state.name", hostile),
		query.EndsWith("state.name", hostile), query.ID(hostile), query.Tenant(hostile),
	}
	db := openSQLite(t)
	mustExec(t, db.Writer(), `CREATE TABLE docs (doc TEXT NOT NULL)`)
	mustExec(t, db.Writer(), `INSERT INTO docs VALUES ('{"aggregateId":"a","state":{"name":"n","tags":["t"]}}')`)
	tr := translator(t, sqlquery.SQLite(), documentSchema())
	pg := translator(t, sqlquery.PostgreSQL(), sqlquery.SnapshotSchema())
	for _, c := range conds {
		plan, err := query.Planner{}.List(query.Query{Condition: c})
		if err != nil {
			t.Fatal(err)
		}
		for _, x := range []*sqlquery.Translator{tr, pg} {
			st, err := x.Find(plan, "docs", []string{"doc"}, sqlquery.Statement{})
			if err != nil {
				t.Fatal(err)
			}
			if strings.Contains(st.SQL, "DROP") {
				t.Fatalf("a value reached the SQL text: %s", st.SQL)
			}
		}
		st, _ := tr.Find(plan, "docs", []string{"doc"}, sqlquery.Statement{})
		docs, err := sqliteBackend{db: db.Reader(), document: true}.rows(context.Background(), st)
		if err != nil || len(docs) != 0 && c.Operator != query.OpNe {
			t.Errorf("%+v: %d documents, %v", c, len(docs), err)
		}
	}
	var n int
	if err := db.Reader().QueryRow(`SELECT count(*) FROM docs`).Scan(&n); err != nil || n != 1 {
		t.Fatalf("the table changed: %d rows, %v", n, err)
	}
}

func TestTranslatorRefuses(t *testing.T) {
	good := sqlquery.SnapshotSchema()
	bad := []struct {
		name string
		d    sqlquery.Dialect
		s    sqlquery.Schema
	}{
		{"no dialect", sqlquery.Dialect{}, good},
		{"empty schema", sqlquery.SQLite(), sqlquery.Schema{}},
		{"bad alias", sqlquery.SQLite(), sqlquery.Schema{Alias: "t;", Document: "doc"}},
		{"bad document column", sqlquery.SQLite(), sqlquery.Schema{Document: "doc-x"}},
		{"bad column", sqlquery.SQLite(), sqlquery.Schema{Fields: map[string]sqlquery.Column{"a": {Name: "a b", Type: sqlquery.Text}}}},
		{"bad field", sqlquery.SQLite(), sqlquery.Schema{Fields: map[string]sqlquery.Column{"a.b": {Name: "ab", Type: sqlquery.Text}}}},
		{"bad type", sqlquery.SQLite(), sqlquery.Schema{Fields: map[string]sqlquery.Column{"a": {Name: "a"}}}},
	}
	for _, c := range bad {
		if _, err := sqlquery.New(c.d, c.s); !errors.Is(err, factum.ErrIllegalArgument) {
			t.Errorf("%s: New = %v, want IllegalArgument", c.name, err)
		}
	}
	tr := translator(t, sqlquery.PostgreSQL(), good)
	for _, c := range []query.Condition{
		query.ID("a"), query.Today("eventTime"), query.Deleted(query.Active),
		query.Eq("state.a-b", 1), query.Eq("", 1), query.Eq("x", nil), query.In("x"),
		query.Between("x", 1, "b"), {Operator: "LIKE", Field: "x", Value: "%"},
		{Operator: query.OpEq, Field: "x", Value: math.NaN()}, {Operator: query.OpIn, Field: "x", Value: []any{math.Inf(-1)}},
	} {
		if _, _, err := tr.Where(c, 0); !errors.Is(err, factum.ErrIllegalArgument) {
			t.Errorf("Where(%+v) = %v, want IllegalArgument", c, err)
		}
	}
	plan := query.Plan{Limit: 1}
	for _, f := range []func() error{
		func() error { _, err := tr.Find(plan, "docs; DROP", []string{"doc"}, sqlquery.Statement{}); return err },
		func() error {
			_, err := tr.Find(plan, `"docs" ; DROP "x"`, []string{"doc"}, sqlquery.Statement{})
			return err
		},
		func() error { _, err := tr.Find(plan, `""`, []string{"doc"}, sqlquery.Statement{}); return err },
		func() error { _, err := tr.Count(query.All(), `"a"b"`, sqlquery.Statement{}); return err },
		func() error { _, err := tr.Find(plan, "docs", []string{"doc, x"}, sqlquery.Statement{}); return err },
		func() error { _, err := tr.Find(plan, "docs", nil, sqlquery.Statement{}); return err },
		func() error {
			_, err := tr.Find(query.Plan{Limit: -1}, "docs", []string{"doc"}, sqlquery.Statement{})
			return err
		},
		func() error {
			_, err := tr.OrderBy([]query.Sort{{Field: "x", Direction: "UP"}})
			return err
		},
	} {
		if err := f(); !errors.Is(err, factum.ErrIllegalArgument) {
			t.Errorf("got %v, want IllegalArgument", err)
		}
	}
	// One quoted identifier is a table name, whatever it holds but quotes.
	st, err := tr.Count(query.All(), `"factum_my-shop.v2_snapshots"`, sqlquery.Statement{})
	if err != nil || !strings.Contains(st.SQL, ` FROM "factum_my-shop.v2_snapshots" AS `) {
		t.Fatalf("quoted table: %q, %v", st.SQL, err)
	}
}
