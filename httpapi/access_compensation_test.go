package httpapi_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/compensation"
	"github.com/factum-go/factum/eventstore"
	"github.com/factum-go/factum/httpapi"
)

// An operator action records the authenticated principal as the operator;
// the Command-Operator header cannot name someone else.
func TestAccessOperatorIsThePrincipal(t *testing.T) {
	broken := new(atomic.Bool)
	broken.Store(true)
	f := compensationFixtureWith(t, broken, httpapi.Config{Access: httpapi.AccessConfig{Authenticator: testKeys(t)}})
	wantOK(t, f.do(t, "POST", "/tenant/acme/cart/c1/add_item", `{"sku":"sku-1","qty":1}`, withKey(keyAcme)...))
	var page struct {
		Total int64               `json:"total"`
		List  []compensation.Item `json:"list"`
	}
	for deadline := time.Now().Add(10 * time.Second); page.Total == 0; time.Sleep(5 * time.Millisecond) {
		r := f.do(t, "GET", "/tenant/acme/compensation/executions", "", withKey(keyAcme)...)
		wantOK(t, r)
		if err := json.Unmarshal(r.body, &page); err != nil {
			t.Fatal(err)
		}
		if time.Now().After(deadline) {
			t.Fatalf("no execution listed: %s", r.body)
		}
	}
	id := page.List[0].ID
	// A read-only key may not act; another tenant's operator finds nothing.
	wantError(t, f.do(t, "PUT", "/tenant/acme/compensation/executions/"+id.ID+"/recoverable", `{"recoverable":"UNRECOVERABLE"}`, withKey(keyAcmeRead)...), http.StatusForbidden, factum.CodeForbidden)
	wantError(t, f.do(t, "PUT", "/tenant/acme/compensation/executions/"+id.ID+"/recoverable", `{"recoverable":"UNRECOVERABLE"}`, withKey(keyGlobex)...), http.StatusNotFound, factum.CodeNotFound)
	wantOK(t, f.do(t, "PUT", "/tenant/acme/compensation/executions/"+id.ID+"/recoverable", `{"recoverable":"UNRECOVERABLE"}`,
		"X-API-Key", keyAcme, httpapi.HeaderOperator, "mallory"))
	streams, err := f.rt.Store().Load(context.Background(), id, 1, eventstore.MaxVersion)
	if err != nil {
		t.Fatal(err)
	}
	last := streams[len(streams)-1]
	if last.OwnerID != "acme-all" {
		t.Fatalf("the operator action's stream has owner %q, want acme-all (streams %+v)", last.OwnerID, streams)
	}
	for _, s := range streams {
		if strings.Contains(s.OwnerID, "mallory") {
			t.Fatal("the Command-Operator header named the operator")
		}
	}
}
