package main

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/compensation"
	"github.com/factum-go/factum/console"
	"github.com/factum-go/factum/nats"
	"github.com/factum-go/factum/projection"
	"github.com/factum-go/factum/query"
)

// The Projections and Cluster pages in the states the example service
// does not reach, over a stub whose answers are the real handlers' types
// (projection.Status, compensation's paged items, the /cluster answer):
// a projection rebuilding to a new schema version with both builds at
// the lag's cap and a recorded failure, one without a Schema (a single
// build, no Rebuild); a cluster view with an instance not seen, an
// unowned partition and the NATS connection down. Each is said, with no
// JavaScript error.
func TestConsoleProjectionAndClusterStates(t *testing.T) {
	b := newBrowser(t)
	c, err := console.New(console.Config{})
	if err != nil {
		t.Fatal(err)
	}
	answer := func(v any) http.HandlerFunc {
		body, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		return func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write(body)
		}
	}
	allQuery := map[string]any{"summary": "All of it.", "parameters": []any{map[string]any{"in": "query", "name": "limit", "schema": map[string]any{"type": "integer", "maximum": 10}}}}
	rebuilding := projection.Status{Context: "shop", Name: "order_summaries", Version: 2,
		Live: &projection.BuildStatus{Build: projection.Build{Number: 3, Version: 1, Tables: []string{"t3"}}, Checkpoint: factum.Position{Seq: 7}, Lag: projection.MaxLag},
		Next: &projection.BuildStatus{Build: projection.Build{Number: 4, Version: 2, Tables: []string{"t4"}}, Lag: projection.MaxLag}}
	single := projection.Status{Context: "shop", Name: "plain", Live: &projection.BuildStatus{Checkpoint: factum.Position{Seq: 9}}}
	failed := query.Paged[compensation.Item]{Total: 2, List: []compensation.Item{{
		ID: factum.AggregateID{ID: "exec-1"},
		Execution: compensation.Execution{Status: compensation.StatusFailed, Error: compensation.ErrorInfo{Code: factum.CodeIllegalState, Message: "no such SKU"},
			FailedEvent: compensation.FailedEvent{Function: factum.Function{Context: "shop", Processor: "order_summaries", Name: "project"}}},
	}}}
	view := clusterInfo{ClusterView: nats.ClusterView{Context: "shop", Partitions: 4, LeaseMillis: 5000, Instance: "a",
		Instances: []nats.InstanceView{{Name: "a", Alive: true, Partitions: []int{0, 1}}, {Name: "b", Partitions: []int{2}}},
		Unowned:   []int{3}}, Connected: false}

	mux := http.NewServeMux()
	mux.Handle(console.DefaultPrefix, c)
	mux.Handle("GET /openapi.json", answer(map[string]any{"paths": map[string]any{
		"/shop/projections":                    map[string]any{"get": map[string]any{}},
		"/shop/projection/order_summaries/all": map[string]any{"get": allQuery},
	}}))
	mux.Handle("GET /principal", answer(map[string]any{"open": true, "admin": true, "roles": []string{}, "tenants": []string{}, "tenant": "default"}))
	mux.Handle("GET /shop/projections", answer([]projection.Status{rebuilding, single}))
	mux.Handle("GET /shop/projections/plain", answer(single))
	mux.HandleFunc("GET /compensation/executions", func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Get("processor") == "order_summaries" && r.URL.Query().Get("context") == "shop" {
			answer(failed)(w, r)
			return
		}
		answer(query.Paged[compensation.Item]{List: []compensation.Item{}})(w, r)
	})
	mux.Handle("GET /cluster", answer(view))
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)

	b.run("open Projections", chromedp.Navigate(srv.URL+"/console/#/projections"),
		until(`document.body.dataset.ready === 'projections' && document.querySelectorAll('tr[data-test=projection]').length === 2`))
	row := `tr[data-test=projection][data-name=order_summaries]`
	for sel, want := range map[string]string{
		row + ` [data-test=state]`: "rebuilding", row + ` [data-test=lag]`: "≥ 10000", row + ` [data-test=live-build]`: "#3",
		`tr[data-test=projection][data-name=plain] [data-test=live-build]`: "single",
		`tr[data-test=projection][data-name=plain] [data-test=state]`:      "caught up",
	} {
		if got := b.text(sel); got != want {
			t.Fatalf("%s shows %q, want %q", sel, got, want)
		}
	}
	if got := b.text(row + ` [data-test=last-failure]`); !strings.Contains(got, "IllegalState") || !strings.Contains(got, "no such SKU") || !strings.Contains(got, "(2 failed)") {
		t.Fatalf("the last failure reads %q", got)
	}
	if got := b.attr(row+` [data-test=last-failure] a`, "href"); got != "#/failures/exec-1" {
		t.Fatalf("the last failure links to %q", got)
	}
	b.run("open plain", chromedp.Navigate(srv.URL+"/console/#/projections/shop/plain"),
		until(`document.body.dataset.ready === 'projections' && !!document.getElementById('projection')`))
	if got := value(b, "Rebuild's state", chromedp.Evaluate[bool](`document.querySelector('[data-test=rebuild]').disabled`)); !got {
		t.Fatal("Rebuild is on for a projection without a Schema")
	}
	if got := b.text(`tr[data-test=build-live] td:nth-child(2)`); got != "single" {
		t.Fatalf("the single build reads %q", got)
	}

	b.run("open Cluster", chromedp.Navigate(srv.URL+"/console/#/cluster"),
		until(`document.body.dataset.ready === 'cluster' && document.querySelectorAll('tr[data-test=instance]').length === 2`))
	for sel, want := range map[string]string{
		`[data-test=connected]`: "disconnected", `[data-test=alive]`: "1", `[data-test=lease]`: "5 s",
		`tr[data-test=instance][data-name=b] .badge`: "not seen",
	} {
		if got := b.text(sel); got != want {
			t.Fatalf("%s shows %q, want %q", sel, got, want)
		}
	}
	if got := b.attr(`[data-test=unowned]`, "data-count"); got != "1" {
		t.Fatalf("the page shows %s unowned partitions, want 1", got)
	}
	if got := b.attr(`[data-test=partition][data-partition="3"]`, "data-owner"); got != "" {
		t.Fatalf("unowned partition 3 shows owner %q", got)
	}
	if got := b.attr(`[data-test=partition][data-partition="2"]`, "class"); !strings.Contains(got, "dead") {
		t.Fatalf("partition 2 of the instance not seen has class %q", got)
	}
	if errs := b.errors(); len(errs) > 0 {
		t.Fatalf("JavaScript errors in the console log:\n%s", strings.Join(errs, "\n"))
	}
}
