package console

import (
	"bytes"
	"embed"
	"encoding/json"
	"fmt"
	"io/fs"
	"mime"
	"net/http"
	"path"
	"strings"
	"time"

	"github.com/factum-go/factum"
)

// DefaultPrefix is the path the console is served under by default.
const DefaultPrefix = "/console/"

//go:embed assets
var assets embed.FS

// Config configures a Handler. The zero value serves the console under
// DefaultPrefix over an API on the same origin.
type Config struct {
	// Prefix is the path the console is mounted under: it starts and ends
	// with '/'; "" means DefaultPrefix.
	Prefix string
	// Title names the service in the console's header; "" means "factum".
	Title string
	// API is the path of the HTTP API on the console's origin, ending in
	// '/'; "" means "/". The console only calls its own origin (its
	// Content-Security-Policy allows nothing else).
	API string
	// Metrics, if set, is the path (on the same origin) of the service's
	// metrics in the Prometheus text format (package telemetry's, as
	// factum serve answers at /metrics), which the overview scrapes every
	// few seconds with the session's credential: it shows commands/s and
	// p50/p95 latency by aggregate type and by wait stage over the last
	// minute, and the lag of each consumer group, with the text itself in
	// a raw metrics section. Unset, the overview says metrics are off.
	Metrics string
}

// Handler serves the console's assets. It is safe for concurrent use.
type Handler struct {
	prefix string
	files  fs.FS
	config []byte // config.json, the settings the pages read
	start  time.Time
}

// New returns the handler of cfg; a prefix or API path that does not
// start and end with '/', or a Metrics path that does not start with
// '/', is IllegalArgument.
func New(cfg Config) (*Handler, error) {
	if cfg.Prefix == "" {
		cfg.Prefix = DefaultPrefix
	}
	if cfg.API == "" {
		cfg.API = "/"
	}
	if cfg.Title == "" {
		cfg.Title = "factum"
	}
	for _, p := range []struct{ name, v string }{{"Prefix", cfg.Prefix}, {"API", cfg.API}} {
		if !strings.HasPrefix(p.v, "/") || !strings.HasSuffix(p.v, "/") || strings.HasPrefix(p.v, "//") {
			return nil, factum.IllegalArgument(fmt.Sprintf("console: Config.%s %q must start and end with '/'", p.name, p.v))
		}
	}
	if cfg.Metrics != "" && (!strings.HasPrefix(cfg.Metrics, "/") || strings.HasPrefix(cfg.Metrics, "//")) {
		return nil, factum.IllegalArgument(fmt.Sprintf("console: Config.Metrics %q must be a path on the same origin", cfg.Metrics))
	}
	files, err := fs.Sub(assets, "assets")
	if err != nil {
		return nil, err
	}
	conf, err := json.Marshal(map[string]string{
		"title": cfg.Title, "api": cfg.API, "metrics": cfg.Metrics, "prefix": cfg.Prefix,
	})
	if err != nil {
		return nil, err
	}
	return &Handler{prefix: cfg.Prefix, files: files, config: conf, start: time.Now()}, nil
}

// Prefix returns the path the handler serves under.
func (h *Handler) Prefix() string { return h.prefix }

// ServeHTTP serves GET and HEAD of the assets under the prefix: the
// prefix itself and any path that names no asset is the application's
// page (it routes in the browser), config.json its settings. Other
// methods are 405. Every answer forbids framing and any origin but the
// console's own.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	hd := w.Header()
	hd.Set("Content-Security-Policy", "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'")
	hd.Set("X-Content-Type-Options", "nosniff")
	hd.Set("X-Frame-Options", "DENY")
	hd.Set("Referrer-Policy", "no-referrer")
	hd.Set("Cache-Control", "no-cache")
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		hd.Set("Allow", "GET, HEAD")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	if !strings.HasPrefix(r.URL.Path, h.prefix) {
		http.NotFound(w, r)
		return
	}
	name := path.Clean("/" + strings.TrimPrefix(r.URL.Path, h.prefix))[1:]
	if name == "config.json" {
		h.serve(w, r, name, h.config)
		return
	}
	b, err := fs.ReadFile(h.files, name)
	if name == "" || err != nil {
		name = "index.html"
		if b, err = fs.ReadFile(h.files, name); err != nil {
			http.Error(w, "console assets missing", http.StatusInternalServerError)
			return
		}
	}
	h.serve(w, r, name, b)
}

func (h *Handler) serve(w http.ResponseWriter, r *http.Request, name string, b []byte) {
	ct := mime.TypeByExtension(path.Ext(name))
	switch path.Ext(name) {
	case ".js":
		ct = "text/javascript; charset=utf-8"
	case ".html":
		ct = "text/html; charset=utf-8"
	case ".css":
		ct = "text/css; charset=utf-8"
	case ".json":
		ct = "application/json"
	}
	if ct == "" {
		ct = "application/octet-stream"
	}
	w.Header().Set("Content-Type", ct)
	http.ServeContent(w, r, name, h.start, bytes.NewReader(b))
}
