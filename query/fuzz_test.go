package query_test

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/query"
	"github.com/factum-go/factum/query/sqlquery"
)

// fuzzDocs are snapshot documents the fuzzed queries run against.
var fuzzDocs = []string{
	`{"aggregateId":"c-1","tenantId":"default","ownerId":"","version":3,"deleted":false,"eventTime":1700000000000,"state":{"items":{"sku-1":2},"qty":3,"tags":["a","b"],"name":"Ann"}}`,
	`{"aggregateId":"c-2","tenantId":"default","ownerId":"u","version":1,"deleted":true,"eventTime":1800000000000,"state":{"qty":null,"tags":[],"lines":[{"sku":"x","qty":1}]}}`,
	`{"aggregateId":"c-3","tenantId":"other","version":7,"state":{}}`,
}

// illegalArgument fails t unless err is an IllegalArgument *factum.Error.
func illegalArgument(t *testing.T, what string, err error) {
	t.Helper()
	var fe *factum.Error
	if !errors.As(err, &fe) || fe.Code != factum.CodeIllegalArgument {
		t.Fatalf("%s: %v (%T), want an IllegalArgument *factum.Error", what, err, err)
	}
}

// FuzzQuery: any bytes parsed as a query fail with IllegalArgument, or
// plan (or are refused by the planner's guards with IllegalArgument),
// evaluate in memory, and translate to SQL for both dialects without a
// panic; an accepted query survives JSON and plans again.
func FuzzQuery(f *testing.F) {
	for _, s := range []string{
		`{}`,
		`{"condition":{"operator":"AGGREGATE_IDS","value":["c-1","c-2"]},"limit":5}`,
		`{"condition":{"operator":"and","children":[{"field":"state.qty","operator":"gt","value":1},{"field":"state.name","operator":"contains","value":"an","options":{"ignoreCase":true}}]},"sort":[{"field":"state.qty","direction":"DESC"}]}`,
		`{"condition":{"operator":"OR","children":[{"field":"state.tags","operator":"ALL_IN","value":["a"]},{"field":"state.lines","operator":"ELEM_MATCH","children":[{"field":"sku","operator":"EQ","value":"x"}]}]}}`,
		`{"condition":{"field":"state.qty","operator":"BETWEEN","value":[1,9007199254740993]}}`,
		`{"condition":{"field":"eventTime","operator":"RECENT_DAYS","value":3,"options":{"zoneId":"Asia/Shanghai"}}}`,
		`{"condition":{"operator":"NOR","children":[{"operator":"DELETED","value":"ALL"}]},"projection":{"include":["state.qty"],"exclude":["state.name"]}}`,
		`{"condition":{"field":"state.x'; DROP TABLE t; --","operator":"EQ","value":"'; DROP TABLE t; --"}}`,
		`{"condition":{"field":"state.a..b","operator":"IN","value":[]}}`,
		`{"condition":{"operator":"BOGUS"}}`,
		`{"limit":-1}`,
		`[]`,
	} {
		f.Add([]byte(s))
	}
	docs := make([]query.Document, len(fuzzDocs))
	for i, s := range fuzzDocs {
		d, err := query.ParseDocument([]byte(s), false)
		if err != nil {
			f.Fatal(err)
		}
		docs[i] = d
	}
	var translators []*sqlquery.Translator
	for _, d := range []sqlquery.Dialect{sqlquery.SQLite(), sqlquery.PostgreSQL()} {
		tr, err := sqlquery.New(d, sqlquery.SnapshotSchema())
		if err != nil {
			f.Fatal(err)
		}
		translators = append(translators, tr)
	}
	var planner query.Planner
	f.Fuzz(func(t *testing.T, data []byte) {
		q, err := query.ParseQuery(data)
		if err != nil {
			illegalArgument(t, "ParseQuery", err)
			return
		}
		plan, err := planner.List(q)
		if err != nil {
			illegalArgument(t, "plan", err)
			return
		}
		if _, _, err := query.Execute(plan, docs); err != nil {
			illegalArgument(t, "execute", err)
		}
		for _, tr := range translators {
			if _, err := tr.Find(plan, "snapshots", sqlquery.SnapshotColumns(), sqlquery.Statement{}); err != nil {
				illegalArgument(t, "translate", err)
			}
		}
		b, err := json.Marshal(q)
		if err != nil {
			t.Fatalf("marshal %#v: %v", q, err)
		}
		back, err := query.ParseQuery(b)
		if err != nil {
			t.Fatalf("accepted query %s re-encodes as %s, which does not parse: %v", data, b, err)
		}
		if _, err := planner.List(back); err != nil {
			t.Fatalf("accepted query %s re-encodes as %s, which does not plan: %v", data, b, err)
		}
	})
}

// FuzzCondition: the condition parser and the count path (the guards and
// the in-memory count) never panic and fail only with IllegalArgument.
func FuzzCondition(f *testing.F) {
	for _, s := range []string{
		`{"operator":"ALL"}`,
		`{"field":"state.qty","operator":"gte","value":2.5}`,
		`{"operator":"AND","children":[{"operator":"TENANT","value":"default"},{"operator":"OWNER","value":"u"}]}`,
		`{"field":"state.name","operator":"STARTS_WITH","value":"A","options":{"ignoreCase":true}}`,
		`{"field":"state.qty","operator":"NULL"}`,
		`{"field":"state.tags","operator":"EXISTS","value":false}`,
		`{"field":"eventTime","operator":"THIS_WEEK","options":{"zoneId":"Nowhere/Land"}}`,
		`{"operator":"IDS","value":"not-a-list"}`,
		`{"field":"state.qty","operator":"EQ","value":{"$gt":1}}`,
		`{"operator":"AND","children":[{"operator":"AND","children":[{"operator":"AND","children":[]}]}]}`,
	} {
		f.Add([]byte(s))
	}
	docs := make([]query.Document, len(fuzzDocs))
	for i, s := range fuzzDocs {
		docs[i], _ = query.ParseDocument([]byte(s), false)
	}
	var planner query.Planner
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := query.ParseCondition(data)
		if err != nil {
			illegalArgument(t, "ParseCondition", err)
			return
		}
		planned, err := planner.Count(c)
		if err != nil {
			illegalArgument(t, "plan count", err)
			return
		}
		if _, err := query.Count(planned, docs); err != nil {
			illegalArgument(t, "count", err)
		}
	})
}
