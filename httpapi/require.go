package httpapi

import (
	"net/http"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/auth"
)

// RequireRole guards a handler that serves beside the API, such as
// /metrics, with the API's credentials: with an Authenticator in access,
// a request without a valid credential is 401 with the API's challenge,
// and one whose principal lacks role is 403. Without an Authenticator it
// is next unchanged, as the API is open then. The guarded handler sees
// the request as it came: no tenant applies, so the role is one that
// spans tenants (auth.RoleAdmin for service-wide figures).
func RequireRole(access AccessConfig, role auth.Role, next http.Handler) http.Handler {
	if access.Authenticator == nil {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p, err := access.Authenticator.Authenticate(r.Context(), r)
		if err != nil {
			challenge(w, access.Realm, err)
			return
		}
		if !p.HasRole(role) {
			writeError(w, factum.NewError(factum.CodeForbidden, "the credential lacks the role "+string(role)))
			return
		}
		next.ServeHTTP(w, r)
	})
}
