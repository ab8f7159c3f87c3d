package console_test

import (
	"encoding/json"
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"path"
	"regexp"
	"strings"
	"testing"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/console"
)

func serve(t *testing.T, h http.Handler, method, target string) (*http.Response, string) {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(method, target, nil))
	res := rec.Result()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return res, string(b)
}

func TestHandlerServesTheAssets(t *testing.T) {
	h, err := console.New(console.Config{Title: "shop", Metrics: "/metrics.json"})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		target, status, ctype, holds string
	}{
		{"/console/", "200", "text/html", `<script type="module" src="app.js">`},
		{"/console/app.js", "200", "text/javascript", "route"},
		{"/console/pages/failures.js", "200", "text/javascript", "compensation/executions"},
		{"/console/style.css", "200", "text/css", "--accent"},
		{"/console/prom.js", "200", "text/javascript", "export function parse"},
		{"/console/chart.js", "200", "text/javascript", "export function sparkline"},
		{"/console/pages/metrics.js", "200", "text/javascript", "factum_consumer_lag_streams"},
		{"/console/pages/projections.js", "200", "text/javascript", "/projections`"},
		{"/console/pages/readquery.js", "200", "text/javascript", "/projection/"},
		{"/console/pages/cluster.js", "200", "text/javascript", "get('cluster'"},
		{"/console/config.json", "200", "application/json", `"title":"shop"`},
		{"/console/failures/01a2", "200", "text/html", `<main id="main"`}, // a route of the page, not a file
		{"/console/../console.go", "200", "text/html", `<main id="main"`}, // never a file outside the assets
		{"/elsewhere", "404", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.target, func(t *testing.T) {
			res, body := serve(t, h, "GET", tt.target)
			if got := res.Status[:3]; got != tt.status {
				t.Fatalf("status %s, want %s", res.Status, tt.status)
			}
			if !strings.HasPrefix(res.Header.Get("Content-Type"), tt.ctype) {
				t.Fatalf("Content-Type %q, want %s", res.Header.Get("Content-Type"), tt.ctype)
			}
			if !strings.Contains(body, tt.holds) {
				t.Fatalf("body does not hold %q: %.200s", tt.holds, body)
			}
			csp := res.Header.Get("Content-Security-Policy")
			for _, d := range []string{"default-src 'self'", "connect-src 'self'", "frame-ancestors 'none'"} {
				if !strings.Contains(csp, d) {
					t.Fatalf("Content-Security-Policy %q lacks %s", csp, d)
				}
			}
			if res.Header.Get("X-Content-Type-Options") != "nosniff" {
				t.Fatal("no nosniff")
			}
		})
	}
	res, _ := serve(t, h, "POST", "/console/")
	if res.StatusCode != http.StatusMethodNotAllowed || res.Header.Get("Allow") != "GET, HEAD" {
		t.Fatalf("POST: %s, Allow %q", res.Status, res.Header.Get("Allow"))
	}
	res, body := serve(t, h, "HEAD", "/console/app.js")
	if res.StatusCode != http.StatusOK || body != "" {
		t.Fatalf("HEAD: %s %q", res.Status, body)
	}
	_, conf := serve(t, h, "GET", "/console/config.json")
	var c map[string]string
	if err := json.Unmarshal([]byte(conf), &c); err != nil || c["api"] != "/" || c["metrics"] != "/metrics.json" || c["prefix"] != "/console/" {
		t.Fatalf("config.json %s: %v", conf, err)
	}
}

func TestNewRefusesBadPaths(t *testing.T) {
	for _, cfg := range []console.Config{
		{Prefix: "console/"}, {Prefix: "/console"}, {Prefix: "//evil/"},
		{API: "https://api.example/"}, {API: "/api"}, {Metrics: "https://metrics.example/m"}, {Metrics: "//x/m"},
	} {
		if _, err := console.New(cfg); factum.CodeOf(err) != factum.CodeIllegalArgument {
			t.Fatalf("New(%+v) = %v, want IllegalArgument", cfg, err)
		}
	}
	h, err := console.New(console.Config{Prefix: "/ops/"})
	if err != nil || h.Prefix() != "/ops/" {
		t.Fatalf("New with a prefix: %v", err)
	}
	if res, _ := serve(t, h, "GET", "/ops/app.js"); res.StatusCode != http.StatusOK {
		t.Fatalf("under its prefix: %s", res.Status)
	}
}

// The console works offline: no asset names anything on another origin,
// every module it imports is embedded, and nothing needs a build step.
func TestAssetsAreSelfContained(t *testing.T) {
	assets := os.DirFS("assets")
	imports := regexp.MustCompile(`(?m)^import .* from '([^']+)';|import\('([^']+)'\)`)
	err := fs.WalkDir(assets, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := fs.ReadFile(assets, p)
		if err != nil {
			return err
		}
		// The SVG namespace is a name, never fetched.
		text := strings.ReplaceAll(string(b), "'http://www.w3.org/2000/svg'", "")
		for _, bad := range []string{"http://", "https://", "src=\"//", "href=\"//", "@import"} {
			if strings.Contains(text, bad) {
				t.Errorf("%s names another origin (%q): the console must work offline", p, bad)
			}
		}
		for _, m := range imports.FindAllStringSubmatch(text, -1) {
			target := path.Join(path.Dir(p), m[1]+m[2])
			if _, err := fs.Stat(assets, target); err != nil {
				t.Errorf("%s imports %s, which is not embedded", p, target)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// The console writes nothing to the browser's log: a credential, a
// request's body or an answer never ends up in it (or in whatever
// collects it).
func TestAssetsLogNothing(t *testing.T) {
	logs := regexp.MustCompile(`\bconsole\s*\.\s*(log|info|warn|error|debug|trace|dir|table)\b`)
	err := fs.WalkDir(os.DirFS("assets"), ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || path.Ext(p) != ".js" {
			return err
		}
		b, err := fs.ReadFile(os.DirFS("assets"), p)
		if err != nil {
			return err
		}
		if m := logs.Find(b); m != nil {
			t.Errorf("%s calls %s: the console must not log", p, m)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
