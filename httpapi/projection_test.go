package httpapi_test

import (
	"context"
	"encoding/json"
	"net/http"
	"path/filepath"
	"testing"
	"time"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/engine"
	"github.com/factum-go/factum/httpapi"
	"github.com/factum-go/factum/projection"
	"github.com/factum-go/factum/sqlite"
	"github.com/getkin/kin-openapi/openapi3"
)

// cartQty is the projection the route tests read: the quantity added per
// tenant and cart, in a SQLite read model.
func cartQty(t *testing.T) *projection.Projection {
	t.Helper()
	p, err := projection.New("shop", "cart_qty",
		func(ctx context.Context, tx projection.Tx, s *factum.EventStream) error {
			for _, e := range s.Events {
				var body struct{ Qty int }
				if err := json.Unmarshal(e.Body, &body); err != nil || body.Qty == 0 {
					continue
				}
				tbl := tx.Table("qty")
				if _, err := tx.Exec(ctx, `INSERT INTO `+tbl+` (tenant, cart, qty) VALUES ($1, $2, $3)
					ON CONFLICT (tenant, cart) DO UPDATE SET qty = `+tbl+`.qty + $3`, s.AggregateID.TenantOrDefault(), s.AggregateID.ID, body.Qty); err != nil {
					return err
				}
			}
			return nil
		},
		projection.Schema(1, "qty"),
		projection.Setup(func(ctx context.Context, tx projection.Tx) error {
			_, err := tx.Exec(ctx, `CREATE TABLE IF NOT EXISTS `+tx.Table("qty")+` (tenant TEXT NOT NULL, cart TEXT NOT NULL, qty INTEGER NOT NULL, PRIMARY KEY (tenant, cart))`)
			return err
		}),
		projection.Query("by_cart", func(q projection.Scope, a projection.Args) (string, []any, error) {
			return `SELECT cart, qty FROM ` + q.From("qty") + ` WHERE cart = $1`, []any{a.String("cart")}, nil
		}, projection.Param("cart", projection.String, true), projection.Describe("One cart's quantity.")),
		projection.Query("at_least", func(q projection.Scope, a projection.Args) (string, []any, error) {
			return `SELECT cart, qty FROM ` + q.From("qty") + ` WHERE qty >= $1 ORDER BY cart`, []any{a.Int("qty")}, nil
		}, projection.Param("qty", projection.Int, false), projection.MaxRows(50)),
	)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// projectionFixture serves the cart with the projection component over a
// SQLite read model, behind the test keys.
func projectionFixture(t *testing.T) (*fixture, *projection.Component) {
	t.Helper()
	ctx := context.Background()
	db, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "read.db"), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	ps, err := sqlite.NewProjectionStore(ctx, db, "shop")
	if err != nil {
		t.Fatal(err)
	}
	comp := projection.NewComponent(projection.ComponentConfig{Store: ps, Projections: []*projection.Projection{cartQty(t)},
		Runner: projection.Config{PollInterval: 10 * time.Millisecond}})
	f := newFixture(t, func(e *engine.Config, h *httpapi.Config) {
		e.Components = append(e.Components, comp)
		h.Projections = comp
		h.Access.Authenticator = testKeys(t)
	})
	return f, comp
}

// rowsOf decodes a query's answer.
func queryRows(t *testing.T, r response) projection.Result {
	t.Helper()
	wantOK(t, r)
	return decode[projection.Result](t, r)
}

// The query route answers only the caller's tenant's rows: another
// tenant's cart is not found by naming it, through the path prefix or
// the principal's home tenant, and a tenant the key does not hold is
// refused.
func TestProjectionQueryRouteIsTenantScoped(t *testing.T) {
	f, _ := projectionFixture(t)
	wait := []string{httpapi.HeaderWaitStage, "PROJECTED"}
	wantOK(t, f.do(t, "POST", "/tenant/acme/cart/a1/add_item", `{"sku":"sku-1","qty":3}`, append(withKey(keyAcme), wait...)...))
	wantOK(t, f.do(t, "POST", "/tenant/globex/cart/g1/add_item", `{"sku":"sku-1","qty":5}`, append(withKey(keyGlobex), wait...)...))

	res := queryRows(t, f.do(t, "GET", "/tenant/acme/shop/projection/cart_qty/by_cart?cart=a1", "", withKey(keyAcmeRead)...))
	if len(res.Rows) != 1 || res.Rows[0]["cart"] != "a1" || res.Rows[0]["qty"] != float64(3) {
		t.Fatalf("acme's cart a1 right after PROJECTED: %+v", res)
	}
	// The home tenant of the key, without a prefix.
	if res := queryRows(t, f.do(t, "GET", "/shop/projection/cart_qty/by_cart?cart=a1", "", withKey(keyAcmeRead)...)); len(res.Rows) != 1 {
		t.Fatalf("acme's cart a1 from the home tenant: %+v", res)
	}
	for _, cart := range []string{"g1", "g1' OR '1'='1", "a1' OR tenant = 'globex"} {
		if res := queryRows(t, f.do(t, "GET", "/tenant/acme/shop/projection/cart_qty/by_cart?cart="+urlEscape(cart), "", withKey(keyAcme)...)); len(res.Rows) != 0 {
			t.Errorf("acme asking for %q sees %+v", cart, res.Rows)
		}
	}
	if res := queryRows(t, f.do(t, "GET", "/tenant/acme/shop/projection/cart_qty/at_least", "", withKey(keyAcme)...)); len(res.Rows) != 1 || res.Rows[0]["cart"] != "a1" {
		t.Errorf("acme's carts: %+v", res.Rows)
	}
	if res := queryRows(t, f.do(t, "GET", "/tenant/globex/shop/projection/cart_qty/at_least", "", withKey(keyGlobex)...)); len(res.Rows) != 1 || res.Rows[0]["cart"] != "g1" {
		t.Errorf("globex's carts: %+v", res.Rows)
	}
	// A tenant the key does not hold is not found (its existence is not
	// disclosed), as on every route.
	wantError(t, f.do(t, "GET", "/tenant/globex/shop/projection/cart_qty/at_least", "", withKey(keyAcme)...), http.StatusNotFound, factum.CodeNotFound)
	wantError(t, f.do(t, "GET", "/tenant/acme/shop/projection/cart_qty/at_least", ""), http.StatusUnauthorized, factum.CodeUnauthorized)
	// The admin reads any tenant, still one at a time.
	if res := queryRows(t, f.do(t, "GET", "/tenant/globex/shop/projection/cart_qty/at_least", "", withKey(keyAdmin)...)); len(res.Rows) != 1 || res.Rows[0]["cart"] != "g1" {
		t.Errorf("the admin in globex: %+v", res.Rows)
	}
}

// Bad input is a typed 400; an unknown projection or query a 404.
func TestProjectionQueryRouteChecksInput(t *testing.T) {
	f, _ := projectionFixture(t)
	key := withKey(keyAcme)
	for _, tc := range []struct {
		path   string
		status int
		code   factum.Code
	}{
		{"/shop/projection/cart_qty/by_cart", http.StatusBadRequest, factum.CodeIllegalArgument},
		{"/shop/projection/cart_qty/by_cart?cart=a&cart=b", http.StatusBadRequest, factum.CodeIllegalArgument},
		{"/shop/projection/cart_qty/by_cart?cart=a&x=1", http.StatusBadRequest, factum.CodeIllegalArgument},
		{"/shop/projection/cart_qty/at_least?qty=many", http.StatusBadRequest, factum.CodeIllegalArgument},
		{"/shop/projection/cart_qty/at_least?limit=51", http.StatusBadRequest, factum.CodeIllegalArgument},
		{"/shop/projection/cart_qty/nope", http.StatusNotFound, factum.CodeNotFound},
		{"/shop/projection/nope/by_cart?cart=a", http.StatusNotFound, factum.CodeNotFound},
	} {
		wantError(t, f.do(t, "GET", tc.path, "", key...), tc.status, tc.code)
	}
	// The aggregate routes are not shadowed: "shop" is no aggregate.
	wantOK(t, f.do(t, "POST", "/cart/projection/add_item", `{"sku":"sku-1","qty":1}`, key...))
	wantOK(t, f.do(t, "GET", "/cart/projection/state/1", "", key...))
}

// A tenant's operator cannot list, read the status of, rebuild or reset
// a projection: its builds hold every tenant's rows, so these routes are
// the admin's, and one tenant's operator never changes what another
// tenant reads.
func TestProjectionOperatorRoutesAreTheAdmins(t *testing.T) {
	f, _ := projectionFixture(t)
	wantOK(t, f.do(t, "POST", "/tenant/globex/cart/g1/add_item", `{"sku":"sku-1","qty":2}`, append(withKey(keyGlobex), httpapi.HeaderWaitStage, "PROJECTED")...))
	for _, tc := range []struct{ method, path string }{
		{"GET", "/shop/projections"},
		{"GET", "/shop/projections/cart_qty"},
		{"POST", "/shop/projections/cart_qty/rebuild"},
		{"POST", "/shop/projections/cart_qty/reset"},
		{"POST", "/tenant/acme/shop/projections/cart_qty/reset"},
	} {
		wantError(t, f.do(t, tc.method, tc.path, "", withKey(keyAcme)...), http.StatusForbidden, factum.CodeForbidden)
	}
	if res := queryRows(t, f.do(t, "GET", "/tenant/globex/shop/projection/cart_qty/by_cart?cart=g1", "", withKey(keyGlobex)...)); res.Build != 1 || len(res.Rows) != 1 {
		t.Fatalf("globex's read model after acme's operator tried a reset: %+v", res)
	}
}

// The operator routes need the admin: list, status, rebuild (to a new
// build, switched to once caught up) and reset.
func TestProjectionOperatorRoutes(t *testing.T) {
	f, _ := projectionFixture(t)
	wantOK(t, f.do(t, "POST", "/cart/c1/add_item", `{"sku":"sku-1","qty":2}`, append(withKey(keyAcme), httpapi.HeaderWaitStage, "PROJECTED")...))
	wantError(t, f.do(t, "GET", "/shop/projections", "", withKey(keyAcmeRead)...), http.StatusForbidden, factum.CodeForbidden)
	wantError(t, f.do(t, "POST", "/shop/projections/cart_qty/rebuild", "", withKey(keyAcmeRead)...), http.StatusForbidden, factum.CodeForbidden)
	list := decode[[]projection.Status](t, f.do(t, "GET", "/shop/projections", "", withKey(keyAdmin)...))
	if len(list) != 1 || list[0].Name != "cart_qty" || list[0].Live == nil || list[0].Live.Number != 1 {
		t.Fatalf("list: %+v", list)
	}
	r := f.do(t, "POST", "/shop/projections/cart_qty/rebuild", "", withKey(keyAdmin)...)
	wantOK(t, r)
	if s := decode[projection.Status](t, r); s.Next == nil && (s.Live == nil || s.Live.Number != 2) {
		t.Fatalf("after rebuild: %+v", s)
	}
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		s := decode[projection.Status](t, f.do(t, "GET", "/shop/projections/cart_qty", "", withKey(keyAdmin)...))
		if s.Live != nil && s.Live.Number == 2 && s.Next == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the rebuild did not switch: %+v", s)
		}
	}
	if res := queryRows(t, f.do(t, "GET", "/shop/projection/cart_qty/by_cart?cart=c1", "", withKey(keyAcme)...)); res.Build != 2 || len(res.Rows) != 1 {
		t.Fatalf("after the rebuild: %+v", res)
	}
	wantOK(t, f.do(t, "POST", "/shop/projections/cart_qty/reset", "", withKey(keyAdmin)...))
	wantError(t, f.do(t, "GET", "/shop/projections/nope", "", withKey(keyAdmin)...), http.StatusNotFound, factum.CodeNotFound)
}

// The document describes each query with its parameters and the operator
// routes, and stays valid.
func TestProjectionOpenAPI(t *testing.T) {
	f, _ := projectionFixture(t)
	doc := loadOpenAPI(t, f)
	if err := doc.Validate(context.Background(), openapi3.EnableExamplesValidation()); err != nil {
		t.Fatalf("invalid document: %v", err)
	}
	q := doc.Paths.Find("/shop/projection/cart_qty/by_cart")
	if q == nil || q.Get == nil {
		t.Fatal("no GET /shop/projection/cart_qty/by_cart")
	}
	if p := q.Get.Parameters.GetByInAndName("query", "cart"); p == nil || !p.Required || !p.Schema.Value.Type.Is("string") {
		t.Errorf("parameter cart: %+v", p)
	}
	if q.Get.Extensions["x-factum-role"] != "read" {
		t.Errorf("role %v", q.Get.Extensions["x-factum-role"])
	}
	for _, p := range []string{"/shop/projections", "/shop/projections/{name}", "/shop/projections/{name}/rebuild", "/tenant/{tenant}/shop/projection/cart_qty/at_least"} {
		if doc.Paths.Find(p) == nil {
			t.Errorf("no path %s", p)
		}
	}
}

func urlEscape(s string) string {
	out := make([]byte, 0, len(s)*3)
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' {
			out = append(out, c)
		} else {
			out = append(out, '%', "0123456789ABCDEF"[c>>4], "0123456789ABCDEF"[c&15])
		}
	}
	return string(out)
}
