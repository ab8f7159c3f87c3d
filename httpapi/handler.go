package httpapi

import (
	"context"
	"fmt"
	"net/http"
	"reflect"
	"strings"
	"sync"
	"time"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/aggregate"
	"github.com/factum-go/factum/codec"
	"github.com/factum-go/factum/compensation"
	"github.com/factum-go/factum/engine"
	"github.com/factum-go/factum/projection"
	"github.com/factum-go/factum/query"
	"github.com/factum-go/factum/snapshot"
)

// Defaults of Config.
const (
	// DefaultMaxBodyBytes bounds a command body (1 MiB).
	DefaultMaxBodyBytes = 1 << 20
	// DefaultMaxWaitTimeout caps Command-Wait-Timeout.
	DefaultMaxWaitTimeout = time.Minute
	// DefaultLicenseName and DefaultLicenseURL are factum's license, the
	// document's unless Config names another.
	DefaultLicenseName = "Apache-2.0"
	DefaultLicenseURL  = "https://www.apache.org/licenses/LICENSE-2.0"
	// DefaultMaxEventRange bounds the versions one event-range request
	// may span.
	DefaultMaxEventRange = 1000
)

// Config configures a Handler. Only Engine is required.
type Config struct {
	// Engine serves the commands and its store the reads; required.
	Engine *engine.Engine
	// Snapshots, if set, is where state reads start: the latest saved
	// state, brought up to date with the streams after it
	// (engine.SnapshotSource over the engine's snapshot store, say).
	// Without it the state is folded from the aggregate's whole history.
	Snapshots aggregate.SnapshotSource
	// SnapshotStore serves GET /{aggregate}/{id}/snapshot (default the
	// engine's, Engine.Snapshots); when it
	// also implements snapshot.Querier (snapshot.Memory does), the snapshot
	// query routes POST /{aggregate}/snapshot/{single|list|paged|count}
	// [/state] too.
	SnapshotStore snapshot.Store
	// QueryPlanner plans snapshot queries: its Limits are the query guards
	// (zero fields take package query's defaults).
	QueryPlanner query.Planner
	// Compensation, if set, serves the operator routes under
	// /compensation/ (executions of failed event functions: list, show,
	// force retry, retry spec, recoverability, function, counts), scoped
	// to the request's tenant; "compensation" then cannot be an aggregate
	// name in URLs.
	Compensation *compensation.Service
	// Projections, if set, serves its projections' read queries, GET
	// /{context}/projection/{name}/{query}?param=… (read role, in the
	// request's tenant), and their operator routes under
	// /{context}/projections (list, status, rebuild, reset; operator
	// role).
	Projections *projection.Component
	// CommandMiddleware, if set, wraps every route that sends a command
	// (POST commands, DELETE, PUT …/recover): the hook for the
	// Idempotency-Key middleware of package idempotency.
	CommandMiddleware func(http.Handler) http.Handler
	// Ready, if set, decides /readyz: a nil error is ready (200), any
	// other 503. Without it /readyz is ready whenever /healthz is.
	Ready func(ctx context.Context) error

	// MaxBodyBytes bounds request bodies; 0 means DefaultMaxBodyBytes.
	// A larger body is refused with 413.
	MaxBodyBytes int64
	// MaxWaitTimeout caps Command-Wait-Timeout; 0 means
	// DefaultMaxWaitTimeout. A larger value is refused with 400
	// IllegalArgument.
	MaxWaitTimeout time.Duration
	// MaxEventRange bounds to-from+1 of an event-range request; 0 means
	// DefaultMaxEventRange.
	MaxEventRange int
	// Title and Version name the API in /openapi.json.
	Title, Version string
	// Access authenticates and authorizes requests and limits their rate
	// per tenant (see AccessConfig); the zero value is an open API.
	Access AccessConfig
	// Streams bounds Server-Sent Event streams (see StreamLimits).
	Streams StreamLimits
	// LicenseName and LicenseURL are the API's license in /openapi.json;
	// default factum's own.
	LicenseName, LicenseURL string
	// Servers are the base URLs /openapi.json names; default "/", the
	// server that serves the document.
	Servers []string
}

// Handler is the HTTP API of a runtime. It is an http.Handler and safe for
// concurrent use.
type Handler struct {
	cfg   Config
	rt    *engine.Engine
	codec *codec.Registry
	// byName resolves the {aggregate} path segment: the aggregate name,
	// or context.aggregate when two contexts share a name.
	byName map[string]aggregate.Type
	// types are the public aggregate types, the only ones routed: an
	// internal type (aggregate.Internal) is absent from every route and
	// from the OpenAPI document.
	types    []aggregate.Type
	ambig    map[string][]string
	commands map[factum.NamedAggregate]map[string]commandInfo
	// projections serves Config.Projections' routes; nil without.
	projections *projectionMux
	queries     map[factum.NamedAggregate]*snapshot.QueryService

	outer *http.ServeMux
	inner http.Handler

	openapiOnce sync.Once
	openapi     []byte
	openapiErr  error
}

// commandInfo is what decoding a command body needs, computed once.
type commandInfo struct {
	spec     aggregate.CommandSpec
	revision int
	// strict refuses body fields the command type does not have.
	strict bool
}

// New returns the handler of cfg.Engine.
func New(cfg Config) (*Handler, error) {
	if cfg.Engine == nil {
		return nil, factum.IllegalArgument("httpapi: Config.Engine is required")
	}
	if cfg.SnapshotStore == nil {
		cfg.SnapshotStore = cfg.Engine.Snapshots()
	}
	if cfg.MaxBodyBytes < 0 || cfg.MaxWaitTimeout < 0 || cfg.MaxEventRange < 0 {
		return nil, factum.IllegalArgument("httpapi: negative limit")
	}
	if cfg.MaxBodyBytes == 0 {
		cfg.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if cfg.MaxWaitTimeout == 0 {
		cfg.MaxWaitTimeout = DefaultMaxWaitTimeout
	}
	if cfg.MaxEventRange == 0 {
		cfg.MaxEventRange = DefaultMaxEventRange
	}
	if cfg.Title == "" {
		cfg.Title = "factum"
	}
	if cfg.Version == "" {
		cfg.Version = "1"
	}
	if cfg.LicenseName == "" {
		cfg.LicenseName, cfg.LicenseURL = DefaultLicenseName, DefaultLicenseURL
	}
	h := &Handler{
		cfg: cfg, rt: cfg.Engine, codec: cfg.Engine.Codec(),
		byName:   map[string]aggregate.Type{},
		ambig:    map[string][]string{},
		commands: map[factum.NamedAggregate]map[string]commandInfo{},
		queries:  map[factum.NamedAggregate]*snapshot.QueryService{},
	}
	for _, t := range h.rt.Registry().Types() {
		if aggregate.Public(t) {
			h.types = append(h.types, t)
		}
	}
	for _, t := range h.types {
		n := t.Named()
		if n.Aggregate == tenantSegment {
			return nil, factum.IllegalArgument(fmt.Sprintf("httpapi: aggregate %s: %q is reserved for the tenant prefix", n, tenantSegment))
		}
		h.byName[n.String()] = t
		if _, taken := h.byName[n.Aggregate]; taken || len(h.ambig[n.Aggregate]) > 0 {
			if prev, ok := h.byName[n.Aggregate]; ok {
				h.ambig[n.Aggregate] = append(h.ambig[n.Aggregate], prev.Named().String())
				delete(h.byName, n.Aggregate)
			}
			h.ambig[n.Aggregate] = append(h.ambig[n.Aggregate], n.String())
		} else {
			h.byName[n.Aggregate] = t
		}
		cmds := map[string]commandInfo{}
		for _, spec := range t.Commands() {
			if spec.Internal {
				continue
			}
			info := commandInfo{spec: spec, strict: !allowsUnknownFields(t)}
			if _, rev, ok := h.codec.NameOf(reflect.Zero(spec.Type).Interface()); ok {
				info.revision = rev
			}
			cmds[spec.Name] = info
		}
		h.commands[n] = cmds
	}
	if err := h.routes(); err != nil {
		return nil, err
	}
	return h, nil
}

// tenantSegment is the first path segment of the tenant-scoped routes.
const tenantSegment = "tenant"

func (h *Handler) routes() error {
	cmd := func(f http.HandlerFunc) http.Handler {
		if h.cfg.CommandMiddleware != nil {
			return h.cfg.CommandMiddleware(f)
		}
		return f
	}
	in := http.NewServeMux()
	in.Handle("POST /{aggregate}/{command}", cmd(h.postCommand))
	in.Handle("POST /{aggregate}/{id}/{command}", cmd(h.postCommand))
	in.Handle("DELETE /{aggregate}/{id}", cmd(h.deleteAggregate))
	in.Handle("PUT /{aggregate}/{id}/recover", cmd(h.recoverAggregate))
	in.HandleFunc("GET /{aggregate}/{id}/state", h.getState)
	in.HandleFunc("GET /{aggregate}/{id}/state/{version}", h.getStateAtVersion)
	in.HandleFunc("GET /{aggregate}/{id}/state/time/{time}", h.getStateAtTime)
	in.HandleFunc("GET /{aggregate}/{id}/event/{from}/{to}", h.getEvents)
	in.HandleFunc("GET /{aggregate}/{id}/request/{requestId}", h.getRequest)
	in.HandleFunc("GET /"+principalSegment, h.getPrincipal)
	if err := h.snapshotRoutes(in); err != nil {
		return err
	}
	in.HandleFunc("/", h.notFound)
	h.inner = in
	if h.cfg.Compensation != nil {
		comp := h.compensationRoutes()
		h.inner = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/"+compensationSegment || strings.HasPrefix(r.URL.Path, "/"+compensationSegment+"/") {
				comp.ServeHTTP(w, r)
				return
			}
			in.ServeHTTP(w, r)
		})
	}
	h.projections = h.projectionRoutes()
	h.inner = h.projections.wrap(h.inner)
	guarded, err := h.guard(in, h.inner)
	if err != nil {
		return err
	}
	h.inner = guarded

	out := http.NewServeMux()
	out.HandleFunc("GET /openapi.json", h.getOpenAPI)
	out.HandleFunc("GET /healthz", h.healthz)
	out.HandleFunc("GET /readyz", h.readyz)
	out.HandleFunc("/"+tenantSegment+"/{tenant}/", h.tenantScoped)
	out.Handle("/", h.inner)
	h.outer = out
	return nil
}

// ServeHTTP implements http.Handler. Every error response it serves is an
// ErrorBody, whoever in the handler chain wrote it (see jsonErrors).
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	jsonErrors(w, r, h.outer)
}

// tenantScoped strips /tenant/{tenant} and serves the rest with the inner
// mux, so every route has its tenant variant and no two patterns can
// conflict over it.
func (h *Handler) tenantScoped(w http.ResponseWriter, r *http.Request) {
	tenant := r.PathValue("tenant")
	if err := factum.ValidateID("tenant", tenant); err != nil || len(tenant) > factum.MaxTenantLen {
		if err == nil {
			err = factum.IllegalArgument(fmt.Sprintf("tenant is longer than %d bytes", factum.MaxTenantLen))
		}
		writeError(w, err)
		return
	}
	prefix := "/" + tenantSegment + "/" + tenant
	r2 := r.WithContext(factum.ContextWithTenant(r.Context(), tenant))
	u := *r.URL
	u.Path = strings.TrimPrefix(r.URL.Path, prefix)
	if u.RawPath != "" {
		u.RawPath = strings.TrimPrefix(r.URL.RawPath, prefix)
	}
	r2.URL = &u
	h.inner.ServeHTTP(w, r2)
}

// tenantOf returns the tenant a request acts in.
func tenantOf(r *http.Request) string { return TenantOf(r) }

// TenantOf returns the tenant a request to the Handler acts in: the one
// of its /tenant/{tenant} prefix, or factum.DefaultTenant. A principal's
// GET /principal without a prefix acts in no tenant when the principal
// does not hold its home one; TenantOf then still answers
// factum.DefaultTenant, which that route does not act in. It is the
// tenant in the request's context (factum.TenantFromContext), so
// middleware on the command routes (Config.CommandMiddleware) scopes by it
// without parsing the path, which the tenant routes have already stripped.
func TenantOf(r *http.Request) string {
	if t, ok := factum.TenantFromContext(r.Context()); ok {
		return t
	}
	return factum.DefaultTenant
}

func (h *Handler) notFound(w http.ResponseWriter, r *http.Request) {
	writeError(w, factum.NotFound(fmt.Sprintf("no route %s %s", r.Method, r.URL.Path)))
}

// aggregateType resolves the {aggregate} path segment.
func (h *Handler) aggregateType(r *http.Request) (aggregate.Type, error) {
	name := r.PathValue("aggregate")
	if t, ok := h.byName[name]; ok {
		return t, nil
	}
	if alts := h.ambig[name]; len(alts) > 0 {
		return nil, factum.IllegalArgument(fmt.Sprintf("aggregate name %q is ambiguous: use one of %s", name, strings.Join(alts, ", ")))
	}
	return nil, factum.NotFound(fmt.Sprintf("unknown aggregate %q", name))
}

// aggregateID resolves {aggregate} and {id} in the request's tenant.
func (h *Handler) aggregateID(r *http.Request) (aggregate.Type, factum.AggregateID, error) {
	t, err := h.aggregateType(r)
	if err != nil {
		return nil, factum.AggregateID{}, err
	}
	id := factum.AggregateID{NamedAggregate: t.Named(), ID: r.PathValue("id"), Tenant: tenantOf(r)}
	if err := id.Validate(); err != nil {
		return nil, id, err
	}
	return t, id, nil
}
