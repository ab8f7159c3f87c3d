package auth

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rsa"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

// Defaults of JWTConfig.
const (
	// DefaultLeeway is the clock skew tolerated on exp, nbf and iat.
	DefaultLeeway = 30 * time.Second
	// DefaultTenantsClaim names the claim listing the tenants.
	DefaultTenantsClaim = "tenants"
	// DefaultRolesClaim names the claim listing the roles.
	DefaultRolesClaim = "roles"
	// MaxTokenBytes bounds a token; a longer one is refused unparsed.
	MaxTokenBytes = 8 << 10
	// minHS256KeyBytes is the shortest HS256 secret accepted: RFC 7518
	// asks for a key at least as long as the hash output.
	minHS256KeyBytes = 32
)

// JWTConfig configures a JWTVerifier. At least one key is required, and
// the issuer and the audience: a token without the right "iss", "aud" and
// a future "exp" is refused.
type JWTConfig struct {
	// HS256Key verifies HS256 tokens (a shared secret of 32 bytes or
	// more).
	HS256Key []byte
	// RS256Key verifies RS256 tokens.
	RS256Key *rsa.PublicKey
	// ES256Key verifies ES256 tokens (a P-256 key).
	ES256Key *ecdsa.PublicKey
	// Issuer must equal the token's "iss".
	Issuer string
	// Audience must be one of the token's "aud".
	Audience string
	// Leeway is the clock skew tolerated; 0 means DefaultLeeway, a
	// negative value is refused.
	Leeway time.Duration
	// TenantsClaim and RolesClaim name the claims holding the tenants and
	// the roles (an array of strings, or one string); empty means
	// DefaultTenantsClaim and DefaultRolesClaim. Unknown role names are
	// ignored, so a token issued for other systems too grants nothing
	// by them.
	TenantsClaim, RolesClaim string
	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

// JWTVerifier verifies JWT bearer tokens. It is safe for concurrent use.
type JWTVerifier struct {
	cfg    JWTConfig
	parser *jwt.Parser
	algs   []string
}

// NewJWTVerifier returns the verifier of cfg, or an error saying what is
// missing.
func NewJWTVerifier(cfg JWTConfig) (*JWTVerifier, error) {
	v := &JWTVerifier{cfg: cfg}
	if cfg.HS256Key != nil {
		if len(cfg.HS256Key) < minHS256KeyBytes {
			return nil, fmt.Errorf("auth: the HS256 key has %d bytes; use at least %d", len(cfg.HS256Key), minHS256KeyBytes)
		}
		v.algs = append(v.algs, jwt.SigningMethodHS256.Alg())
	}
	if cfg.RS256Key != nil {
		if cfg.RS256Key.N.BitLen() < 2048 {
			return nil, fmt.Errorf("auth: the RS256 key has %d bits; use at least 2048", cfg.RS256Key.N.BitLen())
		}
		v.algs = append(v.algs, jwt.SigningMethodRS256.Alg())
	}
	if cfg.ES256Key != nil {
		if cfg.ES256Key.Curve != elliptic.P256() {
			return nil, errors.New("auth: the ES256 key must be on the P-256 curve")
		}
		v.algs = append(v.algs, jwt.SigningMethodES256.Alg())
	}
	if len(v.algs) == 0 {
		return nil, errors.New("auth: JWT: no key configured (HS256, RS256 or ES256)")
	}
	if cfg.Issuer == "" || cfg.Audience == "" {
		return nil, errors.New("auth: JWT: the issuer and the audience are required")
	}
	if cfg.Leeway < 0 {
		return nil, errors.New("auth: JWT: negative leeway")
	}
	if v.cfg.Leeway == 0 {
		v.cfg.Leeway = DefaultLeeway
	}
	if v.cfg.TenantsClaim == "" {
		v.cfg.TenantsClaim = DefaultTenantsClaim
	}
	if v.cfg.RolesClaim == "" {
		v.cfg.RolesClaim = DefaultRolesClaim
	}
	if v.cfg.Now == nil {
		v.cfg.Now = time.Now
	}
	v.parser = jwt.NewParser(
		jwt.WithValidMethods(v.algs),
		jwt.WithIssuer(v.cfg.Issuer),
		jwt.WithAudience(v.cfg.Audience),
		jwt.WithExpirationRequired(),
		jwt.WithIssuedAt(),
		jwt.WithLeeway(v.cfg.Leeway),
		jwt.WithTimeFunc(v.cfg.Now),
	)
	return v, nil
}

// Algorithms returns the signing methods the verifier accepts.
func (v *JWTVerifier) Algorithms() []string { return append([]string(nil), v.algs...) }

// keyFor returns the key of the token's signing method. The parser has
// already refused methods without a key; the switch on the method's type
// also ties each key to its family, so an RSA key can never be handed to
// the HMAC verifier (the classic algorithm-confusion attack).
func (v *JWTVerifier) keyFor(t *jwt.Token) (any, error) {
	switch t.Method.(type) {
	case *jwt.SigningMethodHMAC:
		if t.Method.Alg() == jwt.SigningMethodHS256.Alg() && v.cfg.HS256Key != nil {
			return v.cfg.HS256Key, nil
		}
	case *jwt.SigningMethodRSA:
		if t.Method.Alg() == jwt.SigningMethodRS256.Alg() && v.cfg.RS256Key != nil {
			return v.cfg.RS256Key, nil
		}
	case *jwt.SigningMethodECDSA:
		if t.Method.Alg() == jwt.SigningMethodES256.Alg() && v.cfg.ES256Key != nil {
			return v.cfg.ES256Key, nil
		}
	}
	return nil, jwt.ErrTokenUnverifiable
}

// Verify returns the principal of token, or a *CredentialError whose
// Reason says what failed and whose Err is the jwt package's cause.
func (v *JWTVerifier) Verify(token string) (Principal, error) {
	if len(token) > MaxTokenBytes {
		return Principal{}, &CredentialError{Method: MethodJWT, Reason: "token too large"}
	}
	claims := jwt.MapClaims{}
	if _, err := v.parser.ParseWithClaims(token, claims, v.keyFor); err != nil {
		return Principal{}, &CredentialError{Method: MethodJWT, Reason: jwtReason(err), Err: err}
	}
	sub, err := claims.GetSubject()
	if err != nil || sub == "" {
		return Principal{}, &CredentialError{Method: MethodJWT, Reason: `missing claim "sub"`, Err: jwt.ErrTokenRequiredClaimMissing}
	}
	p := Principal{Name: sub, Method: MethodJWT}
	tenants, ok := stringsClaim(claims[v.cfg.TenantsClaim])
	if !ok {
		return Principal{}, &CredentialError{Method: MethodJWT, Reason: fmt.Sprintf("claim %q is not a string or an array of strings", v.cfg.TenantsClaim)}
	}
	p.Tenants = tenants
	roles, ok := stringsClaim(claims[v.cfg.RolesClaim])
	if !ok {
		return Principal{}, &CredentialError{Method: MethodJWT, Reason: fmt.Sprintf("claim %q is not a string or an array of strings", v.cfg.RolesClaim)}
	}
	for _, r := range roles {
		if role, err := ParseRole(r); err == nil {
			p.Roles = append(p.Roles, role)
		}
	}
	if err := p.validate(); err != nil {
		return Principal{}, &CredentialError{Method: MethodJWT, Reason: "claims: " + err.Error()}
	}
	return p, nil
}

// stringsClaim reads a claim that is one string or an array of strings;
// an absent claim is none.
func stringsClaim(c any) ([]string, bool) {
	switch c := c.(type) {
	case nil:
		return nil, true
	case string:
		return splitComma(c), true
	case []any:
		out := make([]string, 0, len(c))
		for _, e := range c {
			s, ok := e.(string)
			if !ok {
				return nil, false
			}
			out = append(out, s)
		}
		return out, true
	}
	return nil, false
}

// jwtReason names a jwt error in a fixed phrase.
func jwtReason(err error) string {
	for _, r := range []struct {
		err    error
		reason string
	}{
		{jwt.ErrTokenMalformed, "malformed token"},
		{jwt.ErrTokenUnverifiable, "signing method not accepted"},
		{jwt.ErrTokenSignatureInvalid, "bad signature"},
		{jwt.ErrTokenRequiredClaimMissing, "missing claim"},
		{jwt.ErrTokenExpired, "token expired"},
		{jwt.ErrTokenNotValidYet, "token not valid yet"},
		{jwt.ErrTokenUsedBeforeIssued, "token used before issued"},
		{jwt.ErrTokenInvalidIssuer, "wrong issuer"},
		{jwt.ErrTokenInvalidAudience, "wrong audience"},
		{jwt.ErrTokenInvalidClaims, "invalid claims"},
	} {
		if errors.Is(err, r.err) {
			return r.reason
		}
	}
	return "invalid token"
}

// LoadHS256Key reads an HS256 secret from a file, trimming every trailing
// CR and LF (so `openssl rand -base64 48 > key` works as is); any other
// byte, a space or a line end inside the secret included, is kept.
func LoadHS256Key(path string) ([]byte, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("auth: HS256 key file: %w", err)
	}
	return []byte(strings.TrimRight(string(b), "\r\n")), nil
}

// LoadRS256Key reads a PEM RSA public key (PKIX "PUBLIC KEY", PKCS#1 "RSA
// PUBLIC KEY", or a certificate) from a file.
func LoadRS256Key(path string) (*rsa.PublicKey, error) {
	return loadPEMKey(path, "RS256", jwt.ParseRSAPublicKeyFromPEM)
}

// LoadES256Key reads a PEM ECDSA public key (PKIX "PUBLIC KEY" or a
// certificate) from a file. It loads a key on any curve; NewJWTVerifier
// refuses one that is not on P-256, as ES256 needs.
func LoadES256Key(path string) (*ecdsa.PublicKey, error) {
	return loadPEMKey(path, "ES256", jwt.ParseECPublicKeyFromPEM)
}

// loadPEMKey reads the file at path and parses it with parse, naming the
// algorithm alg in its errors.
func loadPEMKey[K any](path, alg string, parse func([]byte) (K, error)) (K, error) {
	var zero K
	b, err := os.ReadFile(path)
	if err != nil {
		return zero, fmt.Errorf("auth: %s key file: %w", alg, err)
	}
	k, err := parse(b)
	if err != nil {
		return zero, fmt.Errorf("auth: %s key file %s: %w", alg, path, err)
	}
	return k, nil
}
