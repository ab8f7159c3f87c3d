package httpapi_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/compensation"
	"github.com/factum-go/factum/engine"
	"github.com/factum-go/factum/event"
	"github.com/factum-go/factum/eventstore"
	"github.com/factum-go/factum/examples/cart"
	"github.com/factum-go/factum/httpapi"
	"github.com/factum-go/factum/internal/compensationtest"
	"github.com/factum-go/factum/snapshot"
)

// compensationFixture serves a cart runtime whose projection fails while
// broken is set, with compensation recording the failures.
func compensationFixture(t *testing.T, broken *atomic.Bool) *fixture {
	t.Helper()
	return compensationFixtureWith(t, broken, httpapi.Config{})
}

// compensationFixtureWith is compensationFixture with the handler's
// configuration cfg (its engine, snapshot store and compensation set).
func compensationFixtureWith(t *testing.T, broken *atomic.Bool, cfg httpapi.Config) *fixture {
	t.Helper()
	snaps := snapshot.NewMemory()
	proj := event.MustProcessor("shop", "cart_counter", factum.StageProjected,
		event.On(func(context.Context, event.Message, cart.ItemAdded) error {
			if broken.Load() {
				return errors.New("read model offline")
			}
			return nil
		}))
	rt, comp := compensationtest.New(t, compensation.Config{Context: "shop", Snapshots: snaps}, engine.Config{
		Store: eventstore.NewMemory(), Processors: []*event.Processor{proj}, Events: event.Config{Attempts: 1},
	}, cart.New(cart.Items{"sku-1": true}, cart.DefaultLimits))
	cfg.SnapshotStore, cfg.Compensation = snaps, comp.Service()
	return serve(t, rt, cfg)
}

func TestCompensationRoutes(t *testing.T) {
	var broken atomic.Bool
	broken.Store(true)
	f := compensationFixture(t, &broken)
	wantOK(t, f.do(t, "POST", "/cart/c1/add_item", `{"sku":"sku-1","qty":1}`))

	// The failure shows up in the list once recorded.
	var page struct {
		Total int64               `json:"total"`
		List  []compensation.Item `json:"list"`
	}
	deadline := time.Now().Add(10 * time.Second)
	for page.Total == 0 {
		r := f.do(t, "GET", "/compensation/executions?status=FAILED&processor=cart_counter", "")
		wantOK(t, r)
		if err := json.Unmarshal(r.body, &page); err != nil {
			t.Fatalf("list body %s: %v", r.body, err)
		}
		if time.Now().After(deadline) {
			t.Fatalf("no failed execution listed: %s", r.body)
		}
		time.Sleep(5 * time.Millisecond)
	}
	id := page.List[0].ID.ID

	r := f.do(t, "GET", "/compensation/executions/"+id, "")
	wantOK(t, r)
	if !strings.Contains(string(r.body), "read model offline") || !strings.Contains(string(r.body), `"history"`) {
		t.Fatalf("detail %s", r.body)
	}
	// Another tenant sees nothing of it.
	r = f.do(t, "GET", "/tenant/acme/compensation/executions", "")
	wantOK(t, r)
	if !strings.Contains(string(r.body), `"total":0`) {
		t.Fatalf("another tenant's list: %s", r.body)
	}
	wantError(t, f.do(t, "GET", "/tenant/acme/compensation/executions/"+id, ""), http.StatusNotFound, factum.CodeNotFound)

	wantOK(t, f.do(t, "PUT", "/compensation/executions/"+id+"/recoverable", `{"recoverable":"UNRECOVERABLE"}`, httpapi.HeaderOperator, "ops-1"))
	deadline = time.Now().Add(10 * time.Second)
	for {
		r = f.do(t, "GET", "/compensation/executions?needsOperator=true", "")
		if strings.Contains(string(r.body), id) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("needs-operator list %s", r.body)
		}
		time.Sleep(5 * time.Millisecond)
	}
	wantOK(t, f.do(t, "PUT", "/compensation/executions/"+id+"/retry-spec", `{"maxRetries":3,"minBackoff":"1s","executionTimeout":"30s"}`))
	wantError(t, f.do(t, "PUT", "/compensation/executions/"+id+"/retry-spec", `{"minBackoff":"soon"}`), http.StatusBadRequest, factum.CodeIllegalArgument)
	wantError(t, f.do(t, "PUT", "/compensation/executions/"+id+"/recoverable", `{"recoverable":"maybe"}`), http.StatusBadRequest, factum.CodeIllegalArgument)
	wantError(t, f.do(t, "GET", "/compensation/executions?page=0", ""), http.StatusBadRequest, factum.CodeIllegalArgument)
	wantError(t, f.do(t, "GET", "/compensation/executions?failedFrom=yesterday", ""), http.StatusBadRequest, factum.CodeIllegalArgument)
	wantError(t, f.do(t, "GET", "/compensation/executions?errorCode=Oops", ""), http.StatusBadRequest, factum.CodeIllegalArgument)
	wantError(t, f.do(t, "GET", "/compensation/executions?failedFrom=0001-01-01T00:00:00Z", ""), http.StatusBadRequest, factum.CodeIllegalArgument)
	wantOK(t, f.do(t, "GET", "/compensation/executions?errorCode=illegalargument", ""))
	// The server filters by time and error code: the failure is in a
	// window around now, and not before an hour ago.
	from, to := time.Now().Add(-time.Hour).UTC().Format(time.RFC3339), time.Now().Add(time.Hour).UTC().Format(time.RFC3339)
	if r = f.do(t, "GET", "/compensation/executions?failedFrom="+from+"&failedTo="+to, ""); !strings.Contains(string(r.body), id) {
		t.Fatalf("the failure is not in the window around now: %s", r.body)
	}
	if r = f.do(t, "GET", "/compensation/executions?failedTo="+from, ""); !strings.Contains(string(r.body), `"total":0`) {
		t.Fatalf("a failure before an hour ago: %s", r.body)
	}

	// The read model is back: an operator's force retry succeeds.
	broken.Store(false)
	r = f.do(t, "POST", "/compensation/executions/"+id+"/retry", "", httpapi.HeaderOperator, "ops-1")
	wantOK(t, r)
	if !strings.Contains(string(r.body), `"outcome":"SUCCEEDED"`) {
		t.Fatalf("force retry %s", r.body)
	}
	// Counts read the snapshot store, which the snapshotter updates just
	// after the retry's PROCESSED.
	deadline = time.Now().Add(10 * time.Second)
	for {
		r = f.do(t, "GET", "/compensation/counts", "")
		wantOK(t, r)
		var counts compensation.Counts
		if err := json.Unmarshal(r.body, &counts); err != nil {
			t.Fatal(err)
		}
		if counts.Succeeded == 1 && counts.Failed == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("counts %s", r.body)
		}
		time.Sleep(5 * time.Millisecond)
	}
	wantError(t, f.do(t, "GET", "/compensation/nope", ""), http.StatusNotFound, factum.CodeNotFound)
}
