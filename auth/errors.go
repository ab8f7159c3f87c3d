package auth

import (
	"errors"
	"fmt"
)

// Sentinel errors, matched with errors.Is.
var (
	// ErrNoCredential: the request carries no credential.
	ErrNoCredential = errors.New("auth: no credential")
	// ErrInvalidCredential: the credential is not valid (unknown key, bad
	// signature, expired token, wrong issuer …). Every *CredentialError
	// matches it.
	ErrInvalidCredential = errors.New("auth: invalid credential")
	// ErrTenantNotHeld: the principal may not act in the tenant.
	ErrTenantNotHeld = errors.New("auth: tenant not held")
	// ErrRoleMissing: the principal lacks the role the action needs.
	ErrRoleMissing = errors.New("auth: role missing")
)

// CredentialError is a refused credential. Reason is a fixed phrase
// ("unknown key", "token expired", "wrong issuer" …) that never contains
// the credential or any configured secret; Err, if set, is the cause (such
// as jwt.ErrTokenExpired), for errors.Is.
type CredentialError struct {
	// Method is MethodAPIKey, MethodJWT, or "" when the kind is unknown.
	Method string
	// Reason says why, without secrets.
	Reason string
	// Err is the underlying cause, if any.
	Err error
}

func (e *CredentialError) Error() string {
	if e.Method == "" {
		return "auth: invalid credential: " + e.Reason
	}
	return fmt.Sprintf("auth: invalid %s: %s", e.Method, e.Reason)
}

// Is matches ErrInvalidCredential.
func (e *CredentialError) Is(target error) bool { return target == ErrInvalidCredential }

// Unwrap returns the cause.
func (e *CredentialError) Unwrap() error { return e.Err }

// AccessError is a refused authorization: Err is ErrTenantNotHeld or
// ErrRoleMissing.
type AccessError struct {
	// Principal is the principal's name.
	Principal string
	// Tenant is the tenant asked for.
	Tenant string
	// Role is the role the action needs.
	Role Role
	// Err is ErrTenantNotHeld or ErrRoleMissing.
	Err error
}

func (e *AccessError) Error() string {
	if errors.Is(e.Err, ErrTenantNotHeld) {
		return fmt.Sprintf("auth: %s does not hold tenant %q", e.Principal, e.Tenant)
	}
	return fmt.Sprintf("auth: %s lacks role %s in tenant %q", e.Principal, e.Role, e.Tenant)
}

// Unwrap returns Err.
func (e *AccessError) Unwrap() error { return e.Err }
