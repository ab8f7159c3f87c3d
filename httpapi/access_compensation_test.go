package httpapi_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/compensation"
	"github.com/factum-go/factum/engine"
	"github.com/factum-go/factum/event"
	"github.com/factum-go/factum/eventstore"
	"github.com/factum-go/factum/examples/cart"
	"github.com/factum-go/factum/httpapi"
	"github.com/factum-go/factum/snapshot"
)

// An operator action records the authenticated principal as the operator;
// the Command-Operator header cannot name someone else.
func TestAccessOperatorIsThePrincipal(t *testing.T) {
	snaps := snapshot.NewMemory()
	store := eventstore.NewMemory()
	comp, err := compensation.New(compensation.Config{Context: "shop", Snapshots: snaps})
	if err != nil {
		t.Fatal(err)
	}
	proj := event.MustProcessor("shop", "cart_counter", factum.StageProjected,
		event.On(func(context.Context, event.Message, cart.ItemAdded) error { return errors.New("read model offline") }))
	rt, err := engine.New(engine.Config{
		Store: store, SnapshotStore: snaps, Failures: comp,
		Processors: []*event.Processor{proj}, Events: event.Config{Attempts: 1},
	}, cart.New(cart.Items{"sku-1": true}, cart.DefaultLimits), comp.Type())
	if err != nil {
		t.Fatal(err)
	}
	if err := comp.Bind(rt); err != nil {
		t.Fatal(err)
	}
	if err := rt.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	h, err := httpapi.New(httpapi.Config{Engine: rt, SnapshotStore: snaps, Compensation: comp.Service(),
		Access: httpapi.AccessConfig{Authenticator: testKeys(t)}})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(func() {
		srv.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = rt.Shutdown(ctx)
	})
	f := &fixture{rt: rt, srv: srv}
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
	streams, err := store.Load(context.Background(), id, 1, eventstore.MaxVersion)
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
