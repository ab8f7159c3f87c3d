package httpapi

import (
	"net/http"
	"reflect"
	"slices"

	"github.com/factum-go/factum/auth"
	"github.com/getkin/kin-openapi/openapi3"
)

// principalSegment is the path of GET /principal; like "tenant", it
// cannot be an aggregate name in GET URLs of one segment.
const principalSegment = "principal"

// PrincipalInfo is the answer of GET /principal: who the request was
// authenticated as and what it may do, so a client (the operator console)
// offers only the tenants and actions its caller holds.
type PrincipalInfo struct {
	// Open is true when the API asks for no credential: every tenant and
	// role is granted, and Name and Method are empty.
	Open bool `json:"open"`
	// Name is the principal's name, the operator recorded for its actions.
	Name string `json:"name,omitempty"`
	// Method is how it was authenticated (api-key or jwt).
	Method string `json:"method,omitempty"`
	// Tenant is the tenant the request acts in: the one of its
	// /tenant/{tenant} prefix, else the principal's home tenant; "" when
	// the principal does not hold that (it holds several tenants, none of
	// them default) and must name one with the prefix.
	Tenant string `json:"tenant"`
	// Tenants are the tenants it holds; an admin holds every tenant, so
	// for an admin they are only those its credential names.
	Tenants []string `json:"tenants"`
	// Roles are its roles (send, read, operator, admin).
	Roles []auth.Role `json:"roles"`
	// Admin reports whether it holds every role in every tenant.
	Admin bool `json:"admin"`
}

// getPrincipal serves GET /principal: the request's principal, in the
// request's tenant (a prefix naming a tenant it does not hold is 404, as
// on every route). Without a prefix it answers in no tenant a principal
// that does not hold its home tenant, as guard lets it through.
func (h *Handler) getPrincipal(w http.ResponseWriter, r *http.Request) {
	info := PrincipalInfo{Tenant: tenantOf(r), Tenants: []string{}, Roles: []auth.Role{}}
	p, ok := RequestPrincipal(r)
	if ok && !p.HoldsTenant(info.Tenant) {
		info.Tenant = ""
	}
	if !ok {
		info.Open, info.Admin = true, true
		info.Roles = []auth.Role{auth.RoleSend, auth.RoleRead, auth.RoleOperator, auth.RoleAdmin}
		writeJSON(w, http.StatusOK, info)
		return
	}
	info.Name, info.Method, info.Admin = p.Name, p.Method, p.IsAdmin()
	info.Tenants = append(info.Tenants, p.Tenants...)
	slices.Sort(info.Tenants)
	info.Roles = append(info.Roles, p.Roles...)
	writeJSON(w, http.StatusOK, info)
}

// principalRoute adds GET /principal to the document.
func (b *docBuilder) principalRoute() {
	ref := b.sc.Define("PrincipalInfo", reflect.TypeFor[PrincipalInfo]())
	o := openapi3.NewOperation()
	o.Tags, o.OperationID = []string{"service"}, "getPrincipal"
	o.Summary = "Who the credential is: its name, tenants and roles."
	secure(o, roleRead)
	o.Responses = b.responses(jsonOK("The principal.", ref, map[string]any{
		"open": false, "name": "support", "method": "api-key", "tenant": "north",
		"tenants": []string{"north"}, "roles": []string{"read", "operator"}, "admin": false,
	}), []int{400, 401, 403, 404, 429, 500})
	b.add("/"+principalSegment, http.MethodGet, o)
}
