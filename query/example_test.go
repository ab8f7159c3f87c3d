package query_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/query"
)

func Example() {
	docs := []query.Document{}
	for _, raw := range []string{
		`{"aggregateId":"c1","tenantId":"t1","deleted":false,"state":{"owner":"Ann","total":120,"tags":["vip"]}}`,
		`{"aggregateId":"c2","tenantId":"t1","deleted":false,"state":{"owner":"bob","total":80}}`,
		`{"aggregateId":"c3","tenantId":"t1","deleted":true,"state":{"owner":"Anna","total":300}}`,
		`{"aggregateId":"c4","tenantId":"t1","deleted":false,"state":{"owner":"annie","total":"n/a"}}`,
	} {
		d, _ := query.ParseDocument([]byte(raw), false)
		docs = append(docs, d)
	}
	carts := query.Collection{Documents: docs}
	ctx := context.Background()

	// Deleted documents are left out unless the condition names deletion;
	// the string "n/a" is not a number, so it is not greater than 50.
	list, _ := carts.List(ctx, query.Query{
		Condition:  query.And(query.StartsWith("state.owner", "an").IgnoreCase(), query.Gt("state.total", 50)),
		Projection: query.Projection{Include: []string{"state.total"}},
		Sort:       []query.Sort{query.SortDesc("state.total")},
	})
	for _, d := range list {
		b, _ := json.Marshal(d)
		fmt.Println(string(b))
	}
	n, _ := carts.Count(ctx, query.Deleted(query.AnyDeletion))
	fmt.Println("all, deleted included:", n)
	// Output:
	// {"aggregateId":"c1","state":{"total":120}}
	// all, deleted included: 4
}

func ExampleParsePagedQuery() {
	q, err := query.ParsePagedQuery([]byte(`{
		"condition": {"operator": "AND", "children": [
			{"field": "state.status", "operator": "IN", "value": ["open", "paid"]},
			{"field": "eventTime", "operator": "RECENT_DAYS", "value": 7}
		]},
		"sort": [{"field": "eventTime", "direction": "DESC"}],
		"pagination": {"index": 2, "size": 20}
	}`))
	if err != nil {
		fmt.Println(err)
		return
	}
	now := time.Date(2026, 3, 11, 15, 30, 0, 0, time.UTC)
	p := query.Planner{Now: func() time.Time { return now }, Location: time.UTC}
	plan, _ := p.Paged(q)
	fmt.Println("offset", plan.Offset, "limit", plan.Limit)
	fmt.Println("sort", plan.Sort)
	b, _ := json.Marshal(plan.Condition)
	fmt.Println(string(b))
	// Output:
	// offset 20 limit 20
	// sort [{eventTime DESC} {aggregateId ASC}]
	// {"operator":"AND","children":[{"field":"state.status","operator":"IN","value":["open","paid"]},{"field":"eventTime","operator":"GTE","value":1772668800000},{"field":"eventTime","operator":"LT","value":1773273600000},{"field":"deleted","operator":"NE","value":true}]}
}

func ExamplePlanner_List_guards() {
	_, err := query.Planner{}.List(query.Query{Limit: 5000})
	fmt.Println(errors.Is(err, factum.ErrIllegalArgument))
	fmt.Println(err)
	// Output:
	// true
	// factum: IllegalArgument: query: list limit 5000 is above the maximum list size 1000
}
