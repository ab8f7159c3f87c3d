package httpapi_test

import (
	"encoding/json"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/factum-go/factum/compensation"
)

// The streams a tenant reads (its events, an execution's history) leave
// out their place in the global log: positions count every tenant's
// streams, so the gap between two of a tenant's own would tell it how
// much the other tenants wrote in between.
func TestStreamsReadByATenantHideTheGlobalLogPosition(t *testing.T) {
	var broken atomic.Bool
	broken.Store(true)
	f := compensationFixture(t, &broken)
	for _, prefix := range []string{"/tenant/acme", "/tenant/globex", "/tenant/globex", "/tenant/acme"} {
		id := map[string]string{"/tenant/acme": "a1", "/tenant/globex": "g1"}[prefix]
		wantOK(t, f.do(t, "POST", prefix+"/cart/"+id+"/add_item", `{"sku":"sku-1","qty":1}`))
	}
	r := f.do(t, "GET", "/tenant/acme/cart/a1/event/1/2", "")
	wantOK(t, r)
	if strings.Contains(string(r.body), `"position"`) {
		t.Fatalf("events show the global log's positions: %s", r.body)
	}

	var page struct {
		List []compensation.Item `json:"list"`
	}
	for deadline := time.Now().Add(10 * time.Second); len(page.List) == 0; time.Sleep(5 * time.Millisecond) {
		r := f.do(t, "GET", "/tenant/acme/compensation/executions", "")
		wantOK(t, r)
		if err := json.Unmarshal(r.body, &page); err != nil {
			t.Fatal(err)
		}
		if time.Now().After(deadline) {
			t.Fatal("no failed execution")
		}
	}
	for _, method := range []string{"GET", "PUT"} {
		path, body := "/tenant/acme/compensation/executions/"+page.List[0].ID.ID, ""
		if method == "PUT" {
			path, body = path+"/recoverable", `{"recoverable":"RECOVERABLE"}`
		}
		r = f.do(t, method, path, body)
		wantOK(t, r)
		if !strings.Contains(string(r.body), `"history"`) || strings.Contains(string(r.body), `"position"`) {
			t.Fatalf("%s %s: the history shows the global log's positions: %s", method, path, r.body)
		}
	}
}
