package auth

import (
	"context"
	"errors"
	"net/http"
	"strings"
)

// HeaderAPIKey is the request header carrying an API key. An API key may
// also be sent as Authorization: Bearer <key>.
const HeaderAPIKey = "X-API-Key"

// Config configures an Authenticator: at least one of Keys and JWT.
type Config struct {
	// Keys verifies API keys.
	Keys *KeySet
	// JWT verifies bearer tokens.
	JWT *JWTVerifier
}

// Authenticator verifies the credential of an HTTP request. It is safe for
// concurrent use.
type Authenticator struct {
	cfg Config
}

// New returns the authenticator of cfg.
func New(cfg Config) (*Authenticator, error) {
	if (cfg.Keys == nil || cfg.Keys.Len() == 0) && cfg.JWT == nil {
		return nil, errors.New("auth: no credentials configured (API keys or a JWT key)")
	}
	return &Authenticator{cfg: cfg}, nil
}

// Authenticate returns the principal of r's credential: the X-API-Key
// header, or Authorization: Bearer with a JWT (three dot-separated parts,
// when a JWT verifier is configured) or an API key. The error is
// ErrNoCredential when there is none, else a *CredentialError.
func (a *Authenticator) Authenticate(_ context.Context, r *http.Request) (Principal, error) {
	key := r.Header.Values(HeaderAPIKey)
	authz := r.Header.Values("Authorization")
	switch {
	case len(key) == 0 && len(authz) == 0:
		return Principal{}, ErrNoCredential
	case len(key)+len(authz) > 1:
		return Principal{}, &CredentialError{Reason: "more than one credential"}
	case len(key) == 1:
		return a.verifyKey(key[0])
	}
	scheme, cred, ok := strings.Cut(authz[0], " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return Principal{}, &CredentialError{Reason: "want Authorization: Bearer"}
	}
	cred = strings.TrimSpace(cred)
	if a.cfg.JWT != nil && strings.Count(cred, ".") == 2 {
		return a.cfg.JWT.Verify(cred)
	}
	return a.verifyKey(cred)
}

func (a *Authenticator) verifyKey(key string) (Principal, error) {
	if a.cfg.Keys == nil {
		return Principal{}, &CredentialError{Method: MethodAPIKey, Reason: "API keys are not accepted"}
	}
	return a.cfg.Keys.Verify(strings.TrimSpace(key))
}
