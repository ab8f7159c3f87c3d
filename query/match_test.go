package query_test

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/query"
	"github.com/factum-go/factum/query/querytest"
)

// TestCorpusExactNumbers runs the corpus over documents whose numbers are
// json.Number, as ParseDocument keeps them for exact re-encoding.
func TestCorpusExactNumbers(t *testing.T) {
	querytest.Run(t, func(t *testing.T, data querytest.Data) querytest.Evaluator {
		c := corpusCollection(data)
		c.Documents = nil
		for _, raw := range data.JSON {
			d, err := query.ParseDocument(raw, true)
			if err != nil {
				t.Fatal(err)
			}
			c.Documents = append(c.Documents, d)
		}
		return c
	})
}

// TestMatchGoValues checks documents built in Go, with Go integer and
// float types and nested Documents, against the JSON semantics.
func TestMatchGoValues(t *testing.T) {
	doc := query.Document{
		"i":    3,
		"i64":  int64(-7),
		"u8":   uint8(200),
		"f32":  float32(1.5),
		"num":  json.Number("2.25"),
		"s":    "Hello",
		"b":    true,
		"n":    nil,
		"sub":  query.Document{"x": 1},
		"list": []any{1, "two", 3.0},
	}
	cases := []struct {
		c    query.Condition
		want bool
	}{
		{query.Eq("i", 3), true},
		{query.Eq("i", "3"), false},
		{query.Gt("i64", -8), true},
		{query.Lt("u8", 200), false},
		{query.Lte("u8", 200), true},
		{query.Eq("f32", 1.5), true},
		{query.Between("num", 2, 2.5), true},
		{query.Eq("sub.x", 1), true},
		{query.Exists("sub.y", false), true},
		{query.Eq("b", true), true},
		{query.Eq("b", 1), false},
		{query.Null("n"), true},
		{query.NotNull("n"), false},
		{query.Exists("n", true), true},
		{query.AllIn("list", "two", 1), true},
		{query.AllIn("list", "two", 2), false},
		{query.In("i", 1, 2, 3), true},
		{query.NotIn("missing", 1), true},
		{query.Ne("missing", 1), true},
		{query.EndsWith("s", "LLO").IgnoreCase(), true},
		{query.EndsWith("s", "LLO"), false},
		{query.ElemMatch("list", query.Eq("", "two")), true},
		{query.ElemMatch("list", query.Gt("", 3)), false},
		{query.Or(), false},
		{query.Nor(), true},
		{query.And(), true},
		{query.Condition{}, true},
	}
	for _, c := range cases {
		m, err := query.Compile(c.c)
		if err != nil {
			t.Fatalf("Compile(%+v): %v", c.c, err)
		}
		if got := m.Match(doc); got != c.want {
			t.Errorf("%+v on %v = %v, want %v", c.c, doc, got, c.want)
		}
	}
}

func TestCompileRefusesWhatAPlannerLowers(t *testing.T) {
	for _, c := range []query.Condition{
		query.ID("a"), query.IDs("a"), query.AggregateID("a"), query.Tenant("t"), query.Owner("o"),
		query.Deleted(query.Active), query.Today("t"), query.RecentDays("t", 2),
		query.And(query.Eq("a", 1), query.ThisMonth("t")),
		query.ElemMatch("a", query.LastWeek("t")),
		query.Eq("a", nil), query.Eq("a b", 1), query.In("a"), query.Between("a", 1, "b"),
		{Operator: "NOPE"}, query.ElemMatch("a"), query.Contains("a", "b").InZone("x"),
	} {
		_, err := query.Compile(c)
		if c.Operator == query.OpContains {
			// Options a core operator does not use are ignored by Compile;
			// the Planner refuses them.
			if err != nil {
				t.Errorf("Compile(%+v): %v", c, err)
			}
			continue
		}
		if !errors.Is(err, factum.ErrIllegalArgument) {
			t.Errorf("Compile(%+v) = %v, want IllegalArgument", c, err)
		}
	}
}

func TestParseDocument(t *testing.T) {
	d, err := query.ParseDocument([]byte(`{"a":{"b":12345678901234567890}}`), true)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(d)
	if string(b) != `{"a":{"b":12345678901234567890}}` {
		t.Errorf("exact numbers re-encode as %s", b)
	}
	if v, ok := d.Lookup("a.b"); !ok || v != json.Number("12345678901234567890") {
		t.Errorf("Lookup(a.b) = %v, %v", v, ok)
	}
	for _, bad := range []string{`[1]`, `null`, `{"a":1} x`, `{"a":`, `"s"`} {
		if _, err := query.ParseDocument([]byte(bad), false); err == nil {
			t.Errorf("ParseDocument(%s) succeeded", bad)
		}
	}
}
