package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/auth"
	"github.com/factum-go/factum/internal/servicetest"
	"github.com/golang-jwt/jwt/v5"
)

// The matrix's tenants and the keys each holds: one per single role, and
// one per role left out.
var matrixTenants = []string{"acme", "globex"}

func matrixKey(tenant, name string) string {
	return "fk_" + tenant + "_" + name + "_0123456789abcdefghij"
}

// writeMatrixKeys writes the key file: for each tenant, keys named
// <tenant>-<role> holding only that role and <tenant>-no<role> holding the
// other two.
func writeMatrixKeys(t *testing.T) string {
	t.Helper()
	roles := []auth.Role{auth.RoleSend, auth.RoleRead, auth.RoleOperator}
	var b strings.Builder
	b.WriteString("# the matrix keys\n")
	for _, tenant := range matrixTenants {
		for _, r := range roles {
			fmt.Fprintf(&b, "%s-%s %s tenants=%s roles=%s\n", tenant, r, auth.HashKey(matrixKey(tenant, string(r))), tenant, r)
			var others []string
			for _, o := range roles {
				if o != r {
					others = append(others, string(o))
				}
			}
			fmt.Fprintf(&b, "%s-no%s %s tenants=%s roles=%s\n", tenant, r, auth.HashKey(matrixKey(tenant, "no"+string(r))), tenant, strings.Join(others, ","))
		}
		fmt.Fprintf(&b, "%s-all %s tenants=%s roles=send,read,operator\n", tenant, auth.HashKey(matrixKey(tenant, "all")), tenant)
	}
	path := filepath.Join(t.TempDir(), "api-keys")
	if err := os.WriteFile(path, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// callAs sends one request with an optional API key.
func callAs(t *testing.T, method, url, body, key string, headers ...string) (int, http.Header, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if key != "" {
		req.Header.Set(auth.HeaderAPIKey, key)
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	return send(t, &http.Client{Timeout: 30 * time.Second}, req)
}

// tenantData is what one tenant seeded: the IDs in paths, and the markers
// no other tenant's answer may contain (its name, the data values and the
// IDs the server made, which a caller cannot type by chance).
type tenantData struct {
	ids        map[string]string // aggregate segment -> aggregate ID
	requestIDs map[string]string // aggregate segment -> a request ID of it
	markers    []string
}

// seedTenant creates one aggregate of each example type in tenant, as its
// send key, and waits for the snapshots.
func seedTenant(t *testing.T, base, tenant, sku string) tenantData {
	t.Helper()
	suffix := tenant[:1]
	d := tenantData{ids: map[string]string{}, requestIDs: map[string]string{}, markers: []string{tenant, sku}}
	send := matrixKey(tenant, "send")
	seed := []struct{ seg, id, cmd, body string }{
		{"inventory", "i-1" + suffix, "restock", `{"qty":5}`},
		{"cart", "c-1" + suffix, "add_item", `{"sku":"` + sku + `","qty":2}`},
		{"order", "o-1" + suffix, "place_order", `{"sku":"i-1` + suffix + `","qty":2}`},
		{"user", "u-1" + suffix, "register_user", `{"username":"user-` + tenant + `","email":"someone@` + tenant + `.example"}`},
	}
	for _, s := range seed {
		rid := "r-" + s.id
		status, _, b := callAs(t, "POST", base+"/tenant/"+tenant+"/"+s.seg+"/"+s.id+"/"+s.cmd, s.body, send,
			"Command-Request-Id", rid, "Command-Wait-Stage", "SNAPSHOT")
		if status != http.StatusOK {
			t.Fatalf("seed %s %s in %s: %d %s", s.seg, s.id, tenant, status, b)
		}
		var res struct{ CommandID string }
		if err := json.Unmarshal(b, &res); err != nil || res.CommandID == "" {
			t.Fatalf("seed result %s", b)
		}
		d.ids[s.seg], d.requestIDs[s.seg] = s.id, rid
		d.markers = append(d.markers, res.CommandID)
		status, _, b = callAs(t, "GET", base+"/tenant/"+tenant+"/"+s.seg+"/"+s.id+"/event/1/1", "", matrixKey(tenant, "read"))
		var streams []factum.EventStream
		if status != http.StatusOK || json.Unmarshal(b, &streams) != nil || len(streams) != 1 {
			t.Fatalf("seeded stream of %s: %d %s", s.id, status, b)
		}
		d.markers = append(d.markers, streams[0].ID)
		for _, e := range streams[0].Events {
			d.markers = append(d.markers, e.ID)
		}
		if streams[0].Header[authPrincipalHeader] != tenant+"-send" {
			t.Fatalf("stream header %v: want the principal %s-send", streams[0].Header, tenant)
		}
	}
	return d
}

const authPrincipalHeader = "factum.principal"

// route is one operation of the OpenAPI document.
type route struct{ method, path string }

// documentedRoutes reads every operation from /openapi.json.
func documentedRoutes(t *testing.T, base string) []route {
	t.Helper()
	status, _, b := callAs(t, "GET", base+"/openapi.json", "", "")
	if status != http.StatusOK {
		t.Fatalf("openapi.json: %d", status)
	}
	var doc struct {
		Paths map[string]map[string]json.RawMessage `json:"paths"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	var out []route
	for p, item := range doc.Paths {
		for m := range item {
			switch m {
			case "get", "put", "post", "delete", "patch":
				out = append(out, route{strings.ToUpper(m), p})
			}
		}
	}
	if len(out) < 50 {
		t.Fatalf("only %d operations documented", len(out))
	}
	// Reads first, then the routes that change things (a delete would
	// otherwise change what later reads see).
	slices.SortFunc(out, func(a, b route) int {
		if (a.method == "GET") != (b.method == "GET") {
			if a.method == "GET" {
				return -1
			}
			return 1
		}
		return strings.Compare(a.method+a.path, b.method+b.path)
	})
	return out
}

var openPaths = []string{"/healthz", "/readyz", "/openapi.json"}

// expectedRole is the role a route needs, decided here from the route's
// shape (independently of the server's table): operator actions and
// snapshot repair need operator, the projections' routes admin, reads and queries read, the rest send.
func expectedRole(method, path string) auth.Role {
	p := strings.TrimPrefix(path, "/tenant/{tenant}")
	switch {
	case strings.HasPrefix(p, "/compensation"):
		return auth.RoleOperator
	case strings.Contains(p, "/projections"): // list, status, rebuild, reset: every tenant's rows
		return auth.RoleAdmin
	case method == "PUT" && strings.HasSuffix(p, "/snapshot"):
		return auth.RoleOperator
	case method == "GET":
		return auth.RoleRead
	case method == "POST" && strings.Contains(p, "/snapshot/"):
		return auth.RoleRead
	}
	return auth.RoleSend
}

// segment returns a documented path's first segment after the tenant
// prefix: the aggregate name, or compensation.
func segment(path string) string {
	return strings.Split(strings.TrimPrefix(strings.TrimPrefix(path, "/tenant/{tenant}"), "/"), "/")[0]
}

// fill replaces the path parameters with valid values of tenant's data.
func fill(path, tenant string, d tenantData) string {
	seg := segment(path)
	id := d.ids[seg]
	if id == "" {
		id = "x-" + seg
	}
	rid := d.requestIDs[seg]
	if rid == "" {
		rid = "r-none"
	}
	return strings.NewReplacer(
		"{tenant}", tenant, "{id}", id, "{version}", "1",
		"{time}", strconv.FormatInt(time.Now().Add(time.Hour).UnixMilli(), 10),
		"{from}", "1", "{to}", "1", "{requestId}", rid,
		"{name}", "order_summaries", "{query}", "totals",
	).Replace(path)
}

// bodyFor is a request body the route accepts syntactically: an empty
// query, condition or command.
func bodyFor(method, path string) string {
	switch {
	case method == "GET" || method == "DELETE":
		return ""
	case strings.HasSuffix(path, "/snapshot/count"):
		return `{"operator":"ALL"}`
	}
	return "{}"
}

// authNotFound is the body of a tenant the credential does not hold.
const authNotFound = `{"code":"NotFound","message":"not found"}`

func leaks(body []byte, markers []string) string {
	for _, m := range markers {
		if bytes.Contains(body, []byte(m)) {
			return m
		}
	}
	return ""
}

func runMatrix(t *testing.T, store storeOptions) {
	var log bytes.Buffer
	opts := serveOptions{Addr: "127.0.0.1:0", storeOptions: store}
	opts.APIKeysFile = writeMatrixKeys(t)
	opts.MaxConns, opts.MaxStreams = 1000, 100
	// JWTs too: the right credential is checked as a token as well.
	secret := "the-matrix-hs256-secret-0123456789abcdef"
	opts.JWTHS256KeyFile = filepath.Join(t.TempDir(), "hs256")
	if err := os.WriteFile(opts.JWTHS256KeyFile, []byte(secret), 0o600); err != nil {
		t.Fatal(err)
	}
	opts.JWTIssuer, opts.JWTAudience = "https://id.example", "factum"
	tokenFor := func(tenant string, role auth.Role) string {
		tok, err := jwt.NewWithClaims(jwt.SigningMethodHS256, jwt.MapClaims{
			"iss": opts.JWTIssuer, "aud": opts.JWTAudience, "sub": tenant + "-token", "exp": time.Now().Add(time.Hour).Unix(),
			"tenants": []any{tenant}, "roles": []any{string(role)},
		}).SignedString([]byte(secret))
		if err != nil {
			t.Fatal(err)
		}
		return tok
	}
	s := startForTest(t, opts, &log)
	base := s.URL
	data := map[string]tenantData{
		"acme":   seedTenant(t, base, "acme", "sku-17"),
		"globex": seedTenant(t, base, "globex", "sku-42"),
	}
	acme, globex := data["acme"], data["globex"]
	routes := documentedRoutes(t, base)
	counts := map[string]int{}
	for _, rt := range routes {
		open := slices.Contains(openPaths, rt.path)
		role := expectedRole(rt.method, rt.path)
		prefixed := strings.HasPrefix(rt.path, "/tenant/{tenant}")
		hasID := strings.Contains(rt.path, "{id}")
		acmeURL := base + fill(rt.path, "acme", acme)
		body := bodyFor(rt.method, rt.path)
		name := rt.method + " " + rt.path

		// No credential: 401 with a challenge, and nothing of anyone.
		status, hdr, b := callAs(t, rt.method, acmeURL, body, "")
		switch {
		case open:
			if status != http.StatusOK {
				t.Errorf("%s without a credential: %d %s", name, status, b)
			}
		case status != http.StatusUnauthorized || !strings.HasPrefix(hdr.Get("WWW-Authenticate"), "Bearer "):
			t.Errorf("%s without a credential: %d (WWW-Authenticate %q) %s", name, status, hdr.Get("WWW-Authenticate"), b)
		}
		if m := leaks(b, append(acme.markers, globex.markers...)); m != "" && rt.path != "/openapi.json" {
			t.Errorf("%s without a credential shows %q: %s", name, m, b)
		}

		// Wrong tenant: globex's key with every role, on acme's data.
		status, _, b = callAs(t, rt.method, acmeURL, body, matrixKey("globex", "all"))
		switch {
		case open:
		case prefixed:
			if status != http.StatusNotFound || strings.TrimSpace(string(b)) != authNotFound {
				t.Errorf("%s with another tenant's key: %d %s, want 404 %s", name, status, b, authNotFound)
			}
		case hasID:
			// Unprefixed, it acts in globex, where acme's IDs do not
			// exist: refused (a body that fails validation is refused
			// before any aggregate is looked at).
			if status < 400 || status >= 500 {
				t.Errorf("%s with another tenant's key on its IDs: %d %s", name, status, b)
			}
		}
		if m := leaks(b, acme.markers); m != "" && rt.path != "/openapi.json" {
			t.Errorf("%s with another tenant's key shows acme's %q: %s", name, m, b)
		}

		if role == auth.RoleAdmin {
			// Every tenant's data: a tenant's key with all its roles is
			// refused.
			status, _, b = callAs(t, rt.method, acmeURL, body, matrixKey("acme", "all"))
			if status != http.StatusForbidden || leaks(b, append(acme.markers, globex.markers...)) != "" {
				t.Errorf("%s with a tenant's key of every role: %d %s, want 403", name, status, b)
			}
			counts[string(role)]++
			continue
		}

		// Wrong role: acme's key with every role but the one needed.
		status, _, b = callAs(t, rt.method, acmeURL, body, matrixKey("acme", "no"+string(role)))
		if !open && status != http.StatusForbidden {
			t.Errorf("%s without role %s: %d %s, want 403", name, role, status, b)
		}
		if m := leaks(b, append(acme.markers[1:], globex.markers...)); m != "" && rt.path != "/openapi.json" {
			t.Errorf("%s without role %s shows %q: %s", name, role, m, b)
		}

		// Right credential: acme's key with just the role needed gets past
		// authorization, and sees nothing of globex.
		status, _, b = callAs(t, rt.method, acmeURL, body, matrixKey("acme", string(role)))
		switch {
		case status == http.StatusUnauthorized || status == http.StatusForbidden || status == http.StatusTooManyRequests || status >= 500:
			t.Errorf("%s with role %s: %d %s", name, role, status, b)
		case strings.TrimSpace(string(b)) == authNotFound:
			t.Errorf("%s with role %s: refused as another tenant's", name, role)
		case rt.method == "GET" && (hasID && acme.ids[segment(rt.path)] != "" || open) && status != http.StatusOK:
			t.Errorf("%s with role %s on seeded data: %d %s, want 200", name, role, status, b)
		}
		if m := leaks(b, globex.markers); m != "" {
			t.Errorf("%s as acme shows globex's %q: %s", name, m, b)
		}
		// The same with a JWT holding just that role; and a token of
		// globex is refused on acme's path like its key.
		tokStatus, _, tb := callAs(t, rt.method, acmeURL, body, "", "Authorization", "Bearer "+tokenFor("acme", role))
		if tokStatus == http.StatusUnauthorized || tokStatus == http.StatusForbidden || strings.TrimSpace(string(tb)) == authNotFound || leaks(tb, globex.markers) != "" {
			t.Errorf("%s with a JWT of role %s: %d %s", name, role, tokStatus, tb)
		}
		if prefixed && !open {
			if st, _, gb := callAs(t, rt.method, acmeURL, body, "", "Authorization", "Bearer "+tokenFor("globex", role)); st != http.StatusNotFound || leaks(gb, acme.markers) != "" {
				t.Errorf("%s with another tenant's JWT: %d %s", name, st, gb)
			}
		}
		counts[string(role)]++
	}
	t.Logf("%d routes × {none, wrong tenant, wrong role, right key, right JWT}; by role %v", len(routes), counts)
	// Nothing secret reached the log.
	if strings.Contains(log.String(), secret) {
		t.Fatalf("the log shows the JWT secret: %s", log.String())
	}
	for _, tenant := range matrixTenants {
		for _, k := range []string{"send", "read", "operator", "all"} {
			if strings.Contains(log.String(), matrixKey(tenant, k)) || strings.Contains(log.String(), auth.HashKey(matrixKey(tenant, k))[len(auth.HashPrefix):]) {
				t.Fatalf("the log shows a key or its hash: %s", log.String())
			}
		}
	}
}

func TestRouteCredentialMatrix(t *testing.T) {
	t.Run("sqlite", func(t *testing.T) {
		runMatrix(t, storeOptions{DataDir: t.TempDir()})
	})
	t.Run("postgres", func(t *testing.T) {
		runMatrix(t, storeOptions{PostgresURL: servicetest.PostgresSchemaURL(t)})
	})
}
