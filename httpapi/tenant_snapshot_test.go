package httpapi_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/engine"
	"github.com/factum-go/factum/httpapi"
	"github.com/factum-go/factum/snapshot"
)

// With a snapshot source over the snapshot store, the state routes of
// another tenant's aggregate answer as for a missing one: the store's
// TenantMismatch must not come through as a 403 that confirms the
// aggregate exists.
func TestStateOfAnotherTenantWithSnapshotSource(t *testing.T) {
	store := snapshot.NewMemory()
	f := newFixture(t, func(rc *engine.Config, h *httpapi.Config) {
		rc.SnapshotStore = store
		h.SnapshotStore = store
		h.Snapshots = engine.SnapshotSource(store)
	})
	wantOK(t, f.do(t, "POST", "/tenant/acme/cart/a1/add_item", `{"sku":"sku-1","qty":7}`, httpapi.HeaderWaitStage, "SNAPSHOT"))
	wantOK(t, f.do(t, "GET", "/tenant/acme/cart/a1/state", ""))
	for _, route := range []string{"/state", "/state/1", "/state/time/4102444800000"} {
		t.Run(route, func(t *testing.T) {
			other := f.do(t, "GET", "/tenant/evil/cart/a1"+route, "")
			wantError(t, other, http.StatusNotFound, factum.CodeNotFound)
			missing := f.do(t, "GET", "/tenant/evil/cart/a2"+route, "")
			wantError(t, missing, http.StatusNotFound, factum.CodeNotFound)
			if got, want := string(other.body), strings.ReplaceAll(string(missing.body), "a2", "a1"); got != want {
				t.Fatalf("another tenant's aggregate answers\n%s\nwant, as a missing one,\n%s", got, want)
			}
		})
	}
}
