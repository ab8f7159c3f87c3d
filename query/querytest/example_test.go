package querytest_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/factum-go/factum/query"
	"github.com/factum-go/factum/query/querytest"
)

// An evaluator proves itself from one test; this is the in-memory one's.
func ExampleRun() {
	_ = func(t *testing.T) {
		querytest.Run(t, func(t *testing.T, data querytest.Data) querytest.Evaluator {
			return query.Collection{
				Planner:   query.Planner{Now: func() time.Time { return data.Now }, Location: data.Location},
				Documents: data.Documents,
			}
		})
	}
}

// Check runs single cases without a *testing.T, for tools and reports.
func ExampleCheck() {
	data := querytest.Dataset()
	ev := query.Collection{
		Planner:   query.Planner{Now: func() time.Time { return data.Now }, Location: data.Location},
		Documents: data.Documents,
	}
	failed := 0
	cases := querytest.Cases()
	for _, c := range cases {
		if querytest.Check(context.Background(), ev, c) != nil {
			failed++
		}
	}
	fmt.Println(len(data.Documents), "documents;", failed, "cases failed")
	// Output:
	// 20 documents; 0 cases failed
}
