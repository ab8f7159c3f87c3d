package query_test

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/query"
	"github.com/factum-go/factum/query/querytest"
)

// TestJSONRoundTripCorpus sends every corpus query through its JSON form
// and back: the decoded query equals the original and gives the same
// answer, and a query the corpus refuses is still refused (possibly
// already when decoding).
func TestJSONRoundTripCorpus(t *testing.T) {
	data := querytest.Dataset()
	ev := corpusCollection(data)
	for _, c := range querytest.Cases() {
		t.Run(c.Name, func(t *testing.T) {
			var (
				b       []byte
				err     error
				decoded querytest.Case = c
			)
			refused := c.Err != ""
			switch c.Kind {
			case querytest.KindList, querytest.KindSingle:
				decoded.Query, b, err = roundTrip(t, "query", c.Query, query.ParseQuery, refused)
			case querytest.KindPaged:
				decoded.Paged, b, err = roundTrip(t, "paged query", c.Paged, query.ParsePagedQuery, refused)
			case querytest.KindCount:
				decoded.Condition, b, err = roundTrip(t, "condition", c.Condition, query.ParseCondition, refused)
			}
			if err != nil {
				if c.Err != factum.CodeIllegalArgument {
					t.Fatalf("JSON round trip failed: %v (json %s)", err, b)
				}
				if !errors.Is(err, factum.ErrIllegalArgument) {
					t.Fatalf("decoding a refused query: %v, want IllegalArgument", err)
				}
				return
			}
			if err := querytest.Check(context.Background(), ev, decoded); err != nil {
				t.Errorf("after the JSON round trip (%s): %v", b, err)
			}
		})
	}
}

// roundTrip encodes v as JSON and parses it back with parse, returning
// what parse returned and the JSON. Unless refused (the case expects an
// error), a value the trip changed is an error of the test.
func roundTrip[T any](t *testing.T, what string, v T, parse func([]byte) (T, error), refused bool) (T, []byte, error) {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		return v, b, err
	}
	got, err := parse(b)
	if err == nil && !reflect.DeepEqual(got, v) && !refused {
		t.Errorf("%s changed in JSON:\n got  %#v\n want %#v\n json %s", what, got, v, b)
	}
	return got, b, err
}

func TestJSONWireForm(t *testing.T) {
	q := query.PagedQuery{
		Condition: query.And(
			query.Eq("state.qty", 3),
			query.Contains("state.name", "al").IgnoreCase(),
			query.Exists("state.note", false),
			query.Today("eventTime").InZone("UTC"),
		),
		Projection: query.Projection{Include: []string{"state.name"}},
		Sort:       []query.Sort{query.SortDesc("version")},
		Pagination: query.Pagination{Index: 2, Size: 5},
	}
	want := `{"condition":{"operator":"AND","children":[` +
		`{"field":"state.qty","operator":"EQ","value":3},` +
		`{"field":"state.name","operator":"CONTAINS","value":"al","options":{"ignoreCase":true}},` +
		`{"field":"state.note","operator":"EXISTS","value":false},` +
		`{"field":"eventTime","operator":"TODAY","options":{"zoneId":"UTC"}}]},` +
		`"projection":{"include":["state.name"]},` +
		`"sort":[{"field":"version","direction":"DESC"}],` +
		`"pagination":{"index":2,"size":5}}`
	b, err := json.Marshal(q)
	if err != nil {
		t.Fatal(err)
	}
	if string(b) != want {
		t.Errorf("JSON form\n got  %s\n want %s", b, want)
	}
	back, err := query.ParsePagedQuery(b)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back, q) {
		t.Errorf("round trip\n got  %#v\n want %#v", back, q)
	}
	if b, _ := json.Marshal(query.Query{}); string(b) != `{}` {
		t.Errorf("empty query encodes as %s, want {}", b)
	}
}

func TestParseAcceptsClientSpellings(t *testing.T) {
	q, err := query.ParseQuery([]byte(`{
		"condition": {"operator": "and", "children": [
			{"field": "state.qty", "operator": "gte", "value": 2.5},
			{"field": "tags", "operator": "In", "value": ["a", 1, true]},
			{"operator": "deleted", "value": "all"}
		]},
		"sort": [{"field": "state.qty", "direction": "desc"}],
		"limit": 5
	}`))
	if err != nil {
		t.Fatal(err)
	}
	want := query.Query{
		Condition: query.And(
			query.Gte("state.qty", 2.5),
			query.In("tags", "a", 1, true),
			query.Condition{Operator: query.OpDeleted, Value: "all"},
		),
		Sort:  []query.Sort{{Field: "state.qty", Direction: "desc"}},
		Limit: 5,
	}
	if !reflect.DeepEqual(q, want) {
		t.Errorf("parsed\n got  %#v\n want %#v", q, want)
	}
	if _, err := (query.Planner{}).List(q); err != nil {
		t.Errorf("planning the parsed query: %v", err)
	}
}

func TestParseRefuses(t *testing.T) {
	cases := []struct{ name, json, mention string }{
		{"unknown member", `{"condition":{"operator":"EQ","feild":"x","value":1}}`, "feild"},
		{"unknown top-level member", `{"limit":1,"offset":5}`, "offset"},
		{"unknown operator", `{"condition":{"field":"x","operator":"REGEX","value":"a.*"}}`, "REGEX"},
		{"trailing data", `{"limit":1} {"limit":2}`, "after"},
		{"not an object", `[1,2]`, "query"},
		{"wrong type", `{"limit":"ten"}`, "limit"},
		{"malformed", `{"limit":`, "query"},
		{"operator not a string", `{"condition":{"operator":7}}`, "operator"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := query.ParseQuery([]byte(c.json))
			if !errors.Is(err, factum.ErrIllegalArgument) {
				t.Fatalf("ParseQuery: %v, want IllegalArgument", err)
			}
			if !strings.Contains(err.Error(), c.mention) {
				t.Errorf("error %q does not mention %q", err, c.mention)
			}
		})
	}
}

// TestParseKeepsHugeIntegersForRefusal checks that integers beyond 2^53
// are not rounded on the way in: planning refuses them.
func TestParseKeepsHugeIntegersForRefusal(t *testing.T) {
	for _, lit := range []string{"9007199254740993", "-9007199254740993", "123456789012345678901234567890"} {
		c, err := query.ParseCondition([]byte(`{"field":"n","operator":"EQ","value":` + lit + `}`))
		if err != nil {
			t.Fatalf("%s: %v", lit, err)
		}
		if _, err := (query.Planner{}).Count(c); !errors.Is(err, factum.ErrIllegalArgument) {
			t.Errorf("%s: planning gave %v, want IllegalArgument", lit, err)
		}
	}
	c, err := query.ParseCondition([]byte(`{"field":"n","operator":"EQ","value":9007199254740992}`))
	if err != nil {
		t.Fatal(err)
	}
	if c.Value != float64(1<<53) {
		t.Errorf("2^53 decoded as %#v", c.Value)
	}
	if c, _ := query.ParseCondition([]byte(`{"field":"n","operator":"EQ","value":1e300}`)); c.Value != 1e300 {
		t.Errorf("1e300 decoded as %#v", c.Value)
	}
}
