package httpapi

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/auth"
)

// Authenticator verifies the credential of a request; *auth.Authenticator
// is one. The error matches auth.ErrNoCredential when the request carries
// none; any other error refuses the credential.
type Authenticator interface {
	Authenticate(ctx context.Context, r *http.Request) (auth.Principal, error)
}

// AccessConfig configures authentication, authorization and per-tenant
// rate limits. The zero value is an open API: no credential is asked for,
// the tenant is the path's (or factum.DefaultTenant) and every role is
// granted. Run it open only where the network already decides who may
// call (factum serve allows that only on a loopback address).
type AccessConfig struct {
	// Authenticator, if set, authenticates every request but GET /healthz,
	// /readyz and /openapi.json: no credential is 401 with a
	// WWW-Authenticate challenge, an invalid one 401 too. The request then
	// acts in the tenant of its path, which the principal must hold (else
	// 404 NotFound, the answer for a tenant that does not exist, so a
	// caller cannot probe for tenants), or without a tenant prefix in the
	// principal's home tenant (auth.Principal.HomeTenant), which it must
	// hold too. GET /principal alone also answers without a prefix a
	// principal that does not hold its home tenant (several tenants, none
	// of them default): it then acts in no tenant. The route's role
	// is checked next (commands need auth.RoleSend; state, events, lookup,
	// snapshots and queries auth.RoleRead; compensation and snapshot repair
	// auth.RoleOperator; a route without a decision auth.RoleAdmin): a
	// missing one is 403 Forbidden. The principal's name is recorded in
	// every command's header (HeaderPrincipal) and so in its event
	// stream's, and it is the operator of compensation actions; no request
	// header can set either.
	Authenticator Authenticator
	// Realm names the protection space in WWW-Authenticate; "" means
	// "factum".
	Realm string
	// RateLimit limits requests per tenant; the zero value does not.
	RateLimit RateLimit
}

// HeaderPrincipal is the command header key holding the name of the
// authenticated principal that sent it. Every derived message (the event
// stream, a saga's commands) carries it, so an audit of the event store
// shows who did what.
const HeaderPrincipal = "factum.principal"

// routeRoles is the role each route pattern needs when an Authenticator
// is set: commands (POST …/{command}, DELETE …/{id}, PUT …/recover) need
// auth.RoleSend; state, events, lookup, GET …/snapshot and the snapshot
// queries auth.RoleRead; /compensation/… and PUT …/snapshot (a repair)
// auth.RoleOperator. An admin holds every role. A pattern missing from
// this table needs auth.RoleAdmin, so a route added without a decision here
// is closed, not open.
var routeRoles = map[string]auth.Role{
	"POST /{aggregate}/{command}":               auth.RoleSend,
	"POST /{aggregate}/{id}/{command}":          auth.RoleSend,
	"DELETE /{aggregate}/{id}":                  auth.RoleSend,
	"PUT /{aggregate}/{id}/recover":             auth.RoleSend,
	"GET /{aggregate}/{id}/state":               auth.RoleRead,
	"GET /{aggregate}/{id}/state/{version}":     auth.RoleRead,
	"GET /{aggregate}/{id}/state/time/{time}":   auth.RoleRead,
	"GET /{aggregate}/{id}/event/{from}/{to}":   auth.RoleRead,
	"GET /{aggregate}/{id}/request/{requestId}": auth.RoleRead,
	"GET /{aggregate}/{id}/snapshot":            auth.RoleRead,
	"POST /{aggregate}/snapshot/{kind}":         auth.RoleRead,
	"POST /{aggregate}/snapshot/{kind}/state":   auth.RoleRead,
	"PUT /{aggregate}/{id}/snapshot":            auth.RoleOperator,
	"GET /" + principalSegment:                  auth.RoleRead,
	"/" + compensationSegment + "/":             auth.RoleOperator,
	"/" + compensationSegment:                   auth.RoleOperator,
}

type principalKey struct{}

// RequestPrincipal returns the principal a request was authenticated as;
// false when the API is open.
func RequestPrincipal(r *http.Request) (auth.Principal, bool) {
	p, ok := r.Context().Value(principalKey{}).(auth.Principal)
	return p, ok
}

// pathTenant returns the tenant of the request's /tenant/{tenant} prefix,
// which tenantScoped put in its context.
func pathTenant(r *http.Request) (string, bool) {
	return factum.TenantFromContext(r.Context())
}

// contextInTenant returns ctx acting in tenant, as tenantOf reads it.
func contextInTenant(ctx context.Context, tenant string) context.Context {
	return factum.ContextWithTenant(ctx, tenant)
}

// guard wraps the routes (after the tenant prefix is stripped) with
// authentication, authorization, rate limits and the stream limits; a
// negative limit is IllegalArgument.
func (h *Handler) guard(mux *http.ServeMux, next http.Handler) (http.Handler, error) {
	rl, sl := h.cfg.Access.RateLimit, h.cfg.Streams
	if rl.PerSecond < 0 || rl.Burst < 0 || rl.MaxTenants < 0 || sl.MaxStreams < 0 || sl.IdleTimeout < 0 {
		return nil, factum.IllegalArgument("httpapi: negative rate or stream limit")
	}
	limits := newTenantLimits(rl)
	streams := newStreamGate(sl)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		role := routeRole(mux, r)
		if pr, ok := h.projections.role(r); ok {
			role = pr
		}
		budget := ""
		if a := h.cfg.Access.Authenticator; a != nil {
			p, err := a.Authenticate(r.Context(), r)
			if err != nil {
				h.challenge(w, err)
				return
			}
			tenant, fromPath := pathTenant(r)
			if !fromPath {
				tenant = p.HomeTenant()
			}
			ctx := context.WithValue(r.Context(), principalKey{}, p)
			if !fromPath && !p.HoldsTenant(tenant) && isPrincipalRoute(mux, r) {
				// GET /principal is how a caller learns its tenants, so it
				// answers a principal whose home tenant it does not hold
				// (several tenants, none of them default). The request acts
				// in no tenant; the context keeps none, and it spends the
				// budget of a tenant the principal holds.
				if !p.HasRole(role) {
					writeAccessError(w, &auth.AccessError{Principal: p.Name, Role: role, Err: auth.ErrRoleMissing})
					return
				}
				r, budget = r.WithContext(ctx), budgetTenant(p)
			} else {
				if err := authorize(p, tenant, role); err != nil {
					writeAccessError(w, err)
					return
				}
				r, budget = r.WithContext(contextInTenant(ctx, tenant)), tenant
			}
		} else {
			budget = tenantOf(r)
		}
		if d, ok := limits.allow(budget); !ok {
			w.Header().Set("Retry-After", retryAfter(d))
			writeError(w, factum.NewError(factum.CodeTooManyRequests, "rate limit of the tenant reached: retry later"))
			return
		}
		if role == auth.RoleSend {
			// A command's answer may come after the longest wait a caller
			// may ask for; the server's write timeout must not cut it.
			_ = http.NewResponseController(w).SetWriteDeadline(time.Now().Add(h.cfg.MaxWaitTimeout + 10*time.Second))
		}
		if wantsEventStream(r) {
			streams.serve(w, r, next)
			return
		}
		next.ServeHTTP(w, r)
	}), nil
}

// routeRole returns the role the route r matches needs: routeRoles' entry
// for the inner mux's pattern, auth.RoleAdmin for a pattern missing there,
// and "" (authentication alone) for no route at all, which is a 404.
func routeRole(mux *http.ServeMux, r *http.Request) auth.Role {
	if r.URL.Path == "/"+compensationSegment || strings.HasPrefix(r.URL.Path, "/"+compensationSegment+"/") {
		return routeRoles["/"+compensationSegment+"/"]
	}
	_, pattern := mux.Handler(r)
	if pattern == "" || pattern == "/" {
		return ""
	}
	if role, ok := routeRoles[pattern]; ok {
		return role
	}
	return auth.RoleAdmin
}

// isPrincipalRoute reports whether r is GET /principal.
func isPrincipalRoute(mux *http.ServeMux, r *http.Request) bool {
	_, pattern := mux.Handler(r)
	return pattern == "GET /"+principalSegment
}

// budgetTenant is the tenant whose rate limit a request of p acting in no
// tenant spends: the first one p holds, so it spends no budget of a tenant
// it does not hold; "" (a bucket no tenant uses) when it lists none.
func budgetTenant(p auth.Principal) string {
	if len(p.Tenants) == 0 {
		return ""
	}
	return slices.Min(p.Tenants)
}

// authorize checks that p holds tenant and, when the route needs one,
// the role: no route at all (role "") is a 404 for anyone in the tenant.
func authorize(p auth.Principal, tenant string, role auth.Role) error {
	if role != "" {
		return auth.Authorize(p, tenant, role)
	}
	if !p.HoldsTenant(tenant) {
		return &auth.AccessError{Principal: p.Name, Tenant: tenant, Err: auth.ErrTenantNotHeld}
	}
	return nil
}

// challenge answers a missing or refused credential: 401 with the
// WWW-Authenticate challenge of RFC 6750. The body says which of the two
// happened and, for a refused one, the auth package's fixed reason; never
// the credential.
func (h *Handler) challenge(w http.ResponseWriter, err error) { challenge(w, h.cfg.Access.Realm, err) }

func challenge(w http.ResponseWriter, realm string, err error) {
	if realm == "" {
		realm = "factum"
	}
	c := `Bearer realm="` + strings.ReplaceAll(realm, `"`, "") + `"`
	msg := "a credential is required: send an API key (X-API-Key or Authorization: Bearer) or a JWT bearer token"
	if !errors.Is(err, auth.ErrNoCredential) {
		c += `, error="invalid_token"`
		msg = "the credential is not valid"
		var ce *auth.CredentialError
		if errors.As(err, &ce) {
			msg += ": " + ce.Reason
		}
	}
	w.Header().Set("WWW-Authenticate", c)
	writeError(w, factum.NewError(factum.CodeUnauthorized, msg))
}

// writeAccessError answers a refused authorization: a tenant the principal
// does not hold is 404 with the same body as any unknown route, so it
// confirms nothing; a missing role is 403 Forbidden.
func writeAccessError(w http.ResponseWriter, err error) {
	var ae *auth.AccessError
	if errors.As(err, &ae) && errors.Is(err, auth.ErrRoleMissing) {
		writeError(w, factum.NewError(factum.CodeForbidden, "the credential lacks the role "+string(ae.Role)))
		return
	}
	writeError(w, factum.NotFound("not found"))
}

// stampPrincipal records the request's principal in the command's header,
// replacing any value already there: only the authentication decides it.
func stampPrincipal(r *http.Request, cmd *factum.Command) {
	if p, ok := RequestPrincipal(r); ok {
		*cmd = cmd.WithHeader(HeaderPrincipal, p.Name)
	}
}

// operatorOf names the operator of a compensation action: the principal
// when the API is authenticated (the Command-Operator header is then
// ignored: it could name anyone), else that header.
func operatorOf(r *http.Request) string {
	if p, ok := RequestPrincipal(r); ok {
		return p.Name
	}
	return r.Header.Get(HeaderOperator)
}
