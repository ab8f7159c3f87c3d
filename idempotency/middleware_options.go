package idempotency

import (
	"crypto/sha256"
	"encoding/hex"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/factum-go/factum"
)

// Headers of the middleware.
const (
	// HeaderKey carries the client's key (IETF draft
	// draft-ietf-httpapi-idempotency-key-header).
	HeaderKey = "Idempotency-Key"
	// HeaderReplayed marks a response replayed from the store.
	HeaderReplayed = "Idempotent-Replayed"
	// HeaderBodyOmitted marks a replay whose original body exceeded
	// MiddlewareOptions.MaxResponseBytes and was not stored.
	HeaderBodyOmitted = "Idempotent-Body-Omitted"
)

// Defaults of MiddlewareOptions.
const (
	DefaultMaxRequestBytes  = 1 << 20
	DefaultMaxResponseBytes = 1 << 20
	DefaultStoreTimeout     = 5 * time.Second
)

// DefaultMethods are the methods the middleware protects by default: the
// unsafe ones. Safe methods are idempotent by definition.
var DefaultMethods = []string{http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete}

// DefaultReplayHeaders are the response headers stored and replayed by
// default: those that describe the result. Cookies and per-response
// headers (Date, tracing) are deliberately left out.
var DefaultReplayHeaders = []string{"Content-Type", "Content-Language", "Content-Location", "Location", "ETag", "Last-Modified"}

// MiddlewareOptions configures NewMiddleware. The zero value protects
// POST, PUT, PATCH and DELETE requests that carry an Idempotency-Key,
// scoped by the request's tenant (DefaultTenant), method and route.
type MiddlewareOptions struct {
	// Required refuses requests without a key with 400. When false, such
	// requests pass through unprotected. Wrap routes that need different
	// settings with different middlewares over the same store.
	Required bool
	// Methods lists the methods protected; others pass through. Default
	// DefaultMethods.
	Methods []string
	// Tenant returns the tenant of a request, which scopes its key: one
	// tenant's keys never replay, block or conflict with another's. It
	// runs after any authentication middleware wrapped around this one.
	// An error answers 400. Default DefaultTenant: the tenant in the
	// request's context (factum.TenantFromContext, which package httpapi
	// sets for every request), else factum.DefaultTenant.
	Tenant func(*http.Request) (string, error)
	// Principal, if set, returns who makes a request (the authenticated
	// caller, as a credential names it), which scopes its key within the
	// tenant: two callers of one tenant then never share a key either. An
	// empty principal leaves the key scoped by tenant only; an error
	// answers 400. The principal is not stored as given: the key's
	// Operation carries a SHA-256 digest of it. Default: none.
	Principal func(*http.Request) (string, error)
	// Operation names what a request does, which scopes its key. Default
	// DefaultOperation.
	Operation func(*http.Request) string
	// Fingerprint identifies a request's payload: the same key with
	// another fingerprint answers 422. An error answers 400. Default
	// DefaultFingerprint.
	Fingerprint func(r *http.Request, body []byte) (string, error)
	// MaxRequestBytes bounds the request body, which is read whole to be
	// fingerprinted; a larger one answers 413. Default
	// DefaultMaxRequestBytes.
	MaxRequestBytes int64
	// MaxResponseBytes bounds the response body kept for replay. A larger
	// response still reaches the first client whole and still completes
	// the key, but its replays carry the original status and headers, a
	// problem body of type ProblemBodyNotStored and the header
	// Idempotent-Body-Omitted: true. Default DefaultMaxResponseBytes.
	MaxResponseBytes int
	// ReplayHeaders lists the response headers stored and replayed.
	// Default DefaultReplayHeaders.
	ReplayHeaders []string
	// Keep decides from the status whether a response is final (stored and
	// replayed) or released so that a retry runs the handler again.
	// Default DefaultKeep.
	Keep func(status int) bool
	// StoreTimeout bounds each store call made once the handler has run.
	// Those calls ignore the request's cancellation: a client that hung up
	// must not leave its finished work unrecorded. Default
	// DefaultStoreTimeout.
	StoreTimeout time.Duration
	// RenewEvery, when positive, renews the lease at this interval while
	// the handler runs; set it to about a third of the store's lease when
	// handlers can outlast the lease. If the key is lost anyway, the
	// handler's context is cancelled. Zero disables renewal.
	RenewEvery time.Duration
	// Logger receives store failures the client cannot be told about.
	// Default slog.Default().
	Logger *slog.Logger
}

// DefaultKeep keeps (and replays) every response below 500 except those
// that say "not now" rather than "no": 401 and 403 (credentials can be
// fixed), 408, 409, 423, 425 and 429.
func DefaultKeep(status int) bool {
	switch status {
	case http.StatusUnauthorized, http.StatusForbidden, http.StatusRequestTimeout, http.StatusConflict,
		http.StatusLocked, http.StatusTooEarly, http.StatusTooManyRequests:
		return false
	}
	return status < 500
}

// DefaultTenant is the default of MiddlewareOptions.Tenant: the tenant in
// the request's context, put there with factum.ContextWithTenant, or
// factum.DefaultTenant when there is none.
func DefaultTenant(r *http.Request) (string, error) {
	if t, ok := factum.TenantFromContext(r.Context()); ok && t != "" {
		return t, nil
	}
	return factum.DefaultTenant, nil
}

// principalOperation scopes op by principal: the digest of the principal
// before the operation, so the key names neither the principal nor its
// length, and a long operation is replaced by its own digest to stay
// within MaxOperationLen.
func principalOperation(principal, op string) string {
	if principal == "" {
		return op
	}
	p := sha256.Sum256([]byte(principal))
	prefix := "principal:" + hex.EncodeToString(p[:16]) + " "
	if len(prefix)+len(op) <= MaxOperationLen {
		return prefix + op
	}
	o := sha256.Sum256([]byte(op))
	return prefix + "sha256:" + hex.EncodeToString(o[:])
}

// DefaultOperation is the method and the route: the ServeMux pattern that
// matched (without its method and host), or the path when the middleware
// runs outside a ServeMux. A route longer than MaxOperationLen allows is
// replaced by its SHA-256.
func DefaultOperation(r *http.Request) string {
	route := r.Pattern
	if route == "" {
		route = r.URL.Path
	} else {
		if _, rest, ok := strings.Cut(route, " "); ok {
			route = strings.TrimLeft(rest, " ")
		}
		if i := strings.IndexByte(route, '/'); i > 0 {
			route = route[i:] // drop the host
		}
	}
	if op := r.Method + " " + route; len(op) <= MaxOperationLen {
		return op
	}
	sum := sha256.Sum256([]byte(route))
	return r.Method + " sha256:" + hex.EncodeToString(sum[:])
}

// DefaultFingerprint is the SHA-256 of the method, the request URI (path
// and query) and the body.
func DefaultFingerprint(r *http.Request, body []byte) (string, error) {
	h := sha256.New()
	io.WriteString(h, r.Method)
	h.Write([]byte{0})
	io.WriteString(h, r.URL.RequestURI())
	h.Write([]byte{0})
	h.Write(body)
	return "sha256:" + hex.EncodeToString(h.Sum(nil)), nil
}
