package auth

import (
	"fmt"
	"slices"
	"strings"

	"github.com/factum-go/factum"
)

// Role is what a principal may do in its tenants.
type Role string

// The roles. RoleAdmin implies every other role, in every tenant.
const (
	// RoleSend sends commands (including delete and recover).
	RoleSend Role = "send"
	// RoleRead reads state, snapshots, event streams, request lookups and
	// snapshot queries.
	RoleRead Role = "read"
	// RoleOperator acts on failed event-function executions
	// (compensation) and repairs snapshots.
	RoleOperator Role = "operator"
	// RoleAdmin holds every role in every tenant.
	RoleAdmin Role = "admin"
)

// Roles lists every role.
var Roles = []Role{RoleSend, RoleRead, RoleOperator, RoleAdmin}

// ParseRole returns the role named s (case-insensitive), or an error
// matching factum.ErrIllegalArgument.
func ParseRole(s string) (Role, error) {
	r := Role(strings.ToLower(strings.TrimSpace(s)))
	if slices.Contains(Roles, r) {
		return r, nil
	}
	return "", factum.IllegalArgument(fmt.Sprintf("auth: unknown role %q (want send, read, operator or admin)", s))
}

// Principal is an authenticated caller.
type Principal struct {
	// Name identifies the caller: the API key's name or the token's
	// subject. It is what an audit records.
	Name string `json:"name"`
	// Tenants are the tenants the principal may act in. An admin holds
	// every tenant whatever this lists.
	Tenants []string `json:"tenants,omitempty"`
	// Roles are what it may do there.
	Roles []Role `json:"roles"`
	// Method says how it was authenticated: MethodAPIKey or MethodJWT.
	Method string `json:"method"`
}

// The authentication methods of Principal.Method.
const (
	MethodAPIKey = "api-key"
	MethodJWT    = "jwt"
)

// IsAdmin reports whether p holds RoleAdmin.
func (p Principal) IsAdmin() bool { return slices.Contains(p.Roles, RoleAdmin) }

// HasRole reports whether p may act with role r: it holds r or is an
// admin.
func (p Principal) HasRole(r Role) bool { return p.IsAdmin() || slices.Contains(p.Roles, r) }

// HoldsTenant reports whether p may act in tenant: it lists it or is an
// admin.
func (p Principal) HoldsTenant(tenant string) bool {
	return p.IsAdmin() || slices.Contains(p.Tenants, tenant)
}

// HomeTenant is the tenant a request that names none acts in: the
// principal's tenant when it holds exactly one (and is no admin), else
// factum.DefaultTenant.
func (p Principal) HomeTenant() string {
	if len(p.Tenants) == 1 && !p.IsAdmin() {
		return p.Tenants[0]
	}
	return factum.DefaultTenant
}

// Authorize returns nil when p may act in tenant with role need. Otherwise
// an *AccessError matching ErrTenantNotHeld (checked first: a caller
// learns nothing about a tenant it does not hold, not even which roles it
// would need there) or ErrRoleMissing.
func Authorize(p Principal, tenant string, need Role) error {
	if !p.HoldsTenant(tenant) {
		return &AccessError{Principal: p.Name, Tenant: tenant, Role: need, Err: ErrTenantNotHeld}
	}
	if !p.HasRole(need) {
		return &AccessError{Principal: p.Name, Tenant: tenant, Role: need, Err: ErrRoleMissing}
	}
	return nil
}

// validate checks a principal built from configuration or claims.
func (p Principal) validate() error {
	if p.Name == "" {
		return fmt.Errorf("principal without a name")
	}
	if len(p.Roles) == 0 {
		return fmt.Errorf("principal %q has no role", p.Name)
	}
	if len(p.Tenants) == 0 && !p.IsAdmin() {
		return fmt.Errorf("principal %q holds no tenant (only admins may omit tenants)", p.Name)
	}
	for _, t := range p.Tenants {
		if err := validTenant(t); err != nil {
			return fmt.Errorf("principal %q: %w", p.Name, err)
		}
	}
	return nil
}

func validTenant(t string) error {
	if err := factum.ValidateID("tenant", t); err != nil {
		return err
	}
	if len(t) > factum.MaxTenantLen {
		return fmt.Errorf("tenant is longer than %d bytes", factum.MaxTenantLen)
	}
	return nil
}
