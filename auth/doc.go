// Package auth turns credentials into principals: who a caller is, which
// tenants it may act in and what it may do there.
//
// A Principal carries a name, its tenants and its roles. RoleSend sends
// commands, RoleRead reads state, snapshots, event streams and request
// lookups, RoleOperator acts on failed executions (compensation), and
// RoleAdmin holds every role in every tenant. Authorize decides whether a
// principal may act in a tenant with a role; its errors say which of the
// two it lacks, so an HTTP surface can answer "not found" for a tenant the
// caller does not hold (never confirming that the tenant exists) and
// "forbidden" for a missing role.
//
// Two kinds of credential are verified:
//
//   - API keys (KeySet): random secrets handed to callers, stored only as
//     SHA-256 hashes, loaded from a file or an environment variable in the
//     line format ParseKeys documents. A presented key is hashed, and its
//     hash is compared in constant time with the stored hashes that share
//     its first bytes (an index, so the cost does not grow with the keys).
//   - JWT bearer tokens (JWTVerifier), signed with HS256, RS256 or ES256
//     using keys from files. The signing method must be one a configured
//     key is for, so a token cannot pick its own algorithm (an HS256 token
//     "signed" with an RSA public key, or alg "none", is refused). The
//     issuer, the audience and the expiry are required and checked with a
//     bounded clock skew; the tenants and roles come from claims (by
//     default "tenants" and "roles"), the principal's name from "sub".
//
// An Authenticator reads the credential of an HTTP request (the X-API-Key
// header, or Authorization: Bearer with an API key or a JWT) and verifies
// it. Every failure is a *CredentialError matching ErrInvalidCredential, or
// ErrNoCredential when the request carries none. No error, and no String
// method of this package, ever contains a secret: keys, hashes and tokens
// are neither logged nor echoed.
package auth
