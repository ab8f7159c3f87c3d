package auth_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/factum-go/factum/auth"
	"github.com/golang-jwt/jwt/v5"
)

var (
	hsKey  = []byte("an-hs256-secret-of-more-than-32-bytes!!")
	rsaKey = mustRSA()
	ecKey  = mustEC()
	now    = time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
)

func mustRSA() *rsa.PrivateKey {
	k, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		panic(err)
	}
	return k
}

func mustEC() *ecdsa.PrivateKey {
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		panic(err)
	}
	return k
}

func pemPublic(t *testing.T, pub any) []byte {
	t.Helper()
	der, err := x509.MarshalPKIXPublicKey(pub)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der})
}

// claims returns valid claims for the test verifier, edited by edit.
func claims(edit func(jwt.MapClaims)) jwt.MapClaims {
	c := jwt.MapClaims{
		"iss": "https://issuer.example", "aud": "factum", "sub": "alice",
		"exp": now.Add(time.Hour).Unix(), "iat": now.Add(-time.Minute).Unix(),
		"tenants": []any{"acme"}, "roles": []any{"send", "read"},
	}
	if edit != nil {
		edit(c)
	}
	return c
}

func sign(t *testing.T, m jwt.SigningMethod, key any, c jwt.MapClaims) string {
	t.Helper()
	s, err := jwt.NewWithClaims(m, c).SignedString(key)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func verifier(t *testing.T, edit func(*auth.JWTConfig)) *auth.JWTVerifier {
	t.Helper()
	cfg := auth.JWTConfig{
		HS256Key: hsKey, RS256Key: &rsaKey.PublicKey, ES256Key: &ecKey.PublicKey,
		Issuer: "https://issuer.example", Audience: "factum",
		Now: func() time.Time { return now },
	}
	if edit != nil {
		edit(&cfg)
	}
	v, err := auth.NewJWTVerifier(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func TestJWTVerify(t *testing.T) {
	all := verifier(t, nil)
	rsOnly := verifier(t, func(c *auth.JWTConfig) { c.HS256Key, c.ES256Key = nil, nil })
	hsOnly := verifier(t, func(c *auth.JWTConfig) { c.RS256Key, c.ES256Key = nil, nil })
	// The alg-confusion attack: the RSA public key, which is public, used
	// as an HMAC secret.
	rsaPEM := pemPublic(t, &rsaKey.PublicKey)
	noneToken := sign(t, jwt.SigningMethodNone, jwt.UnsafeAllowNoneSignatureType, claims(nil))

	tests := []struct {
		name   string
		v      *auth.JWTVerifier
		token  string
		reason string // "" means valid
	}{
		{"HS256", all, sign(t, jwt.SigningMethodHS256, hsKey, claims(nil)), ""},
		{"RS256", all, sign(t, jwt.SigningMethodRS256, rsaKey, claims(nil)), ""},
		{"ES256", all, sign(t, jwt.SigningMethodES256, ecKey, claims(nil)), ""},
		{"audience in a list", all, sign(t, jwt.SigningMethodHS256, hsKey, claims(func(c jwt.MapClaims) { c["aud"] = []any{"other", "factum"} })), ""},
		{"expired within the leeway", all, sign(t, jwt.SigningMethodHS256, hsKey, claims(func(c jwt.MapClaims) { c["exp"] = now.Add(-10 * time.Second).Unix() })), ""},
		{"expired beyond the leeway", all, sign(t, jwt.SigningMethodHS256, hsKey, claims(func(c jwt.MapClaims) { c["exp"] = now.Add(-time.Minute).Unix() })), "token expired"},
		{"no expiry", all, sign(t, jwt.SigningMethodHS256, hsKey, claims(func(c jwt.MapClaims) { delete(c, "exp") })), "missing claim"},
		{"not yet valid", all, sign(t, jwt.SigningMethodHS256, hsKey, claims(func(c jwt.MapClaims) { c["nbf"] = now.Add(time.Minute).Unix() })), "token not valid yet"},
		{"nbf within the leeway", all, sign(t, jwt.SigningMethodHS256, hsKey, claims(func(c jwt.MapClaims) { c["nbf"] = now.Add(10 * time.Second).Unix() })), ""},
		{"issued in the future", all, sign(t, jwt.SigningMethodHS256, hsKey, claims(func(c jwt.MapClaims) { c["iat"] = now.Add(time.Hour).Unix() })), "token used before issued"},
		{"wrong issuer", all, sign(t, jwt.SigningMethodHS256, hsKey, claims(func(c jwt.MapClaims) { c["iss"] = "https://evil.example" })), "wrong issuer"},
		{"no issuer", all, sign(t, jwt.SigningMethodHS256, hsKey, claims(func(c jwt.MapClaims) { delete(c, "iss") })), "missing claim"},
		{"wrong audience", all, sign(t, jwt.SigningMethodHS256, hsKey, claims(func(c jwt.MapClaims) { c["aud"] = "other" })), "wrong audience"},
		{"no subject", all, sign(t, jwt.SigningMethodHS256, hsKey, claims(func(c jwt.MapClaims) { delete(c, "sub") })), `missing claim "sub"`},
		{"no tenant", all, sign(t, jwt.SigningMethodHS256, hsKey, claims(func(c jwt.MapClaims) { delete(c, "tenants") })), "claims: "},
		{"only unknown roles", all, sign(t, jwt.SigningMethodHS256, hsKey, claims(func(c jwt.MapClaims) { c["roles"] = []any{"root"} })), "claims: "},
		{"tenants not strings", all, sign(t, jwt.SigningMethodHS256, hsKey, claims(func(c jwt.MapClaims) { c["tenants"] = []any{1} })), `claim "tenants"`},
		{"bad tenant", all, sign(t, jwt.SigningMethodHS256, hsKey, claims(func(c jwt.MapClaims) { c["tenants"] = "a/b" })), "claims: "},
		{"wrong HMAC secret", all, sign(t, jwt.SigningMethodHS256, []byte("another-secret-of-more-than-32-bytes!!"), claims(nil)), "bad signature"},
		{"wrong RSA key", all, sign(t, jwt.SigningMethodRS256, mustRSA(), claims(nil)), "bad signature"},
		{"alg none", all, noneToken, "bad signature"},
		{"HS256 signed with the RSA public key, RS256 verifier", rsOnly, sign(t, jwt.SigningMethodHS256, rsaPEM, claims(nil)), "bad signature"},
		{"HS256 signed with the RSA public key, both verifiers", all, sign(t, jwt.SigningMethodHS256, rsaPEM, claims(nil)), "bad signature"},
		{"RS256 token, HS256 verifier", hsOnly, sign(t, jwt.SigningMethodRS256, rsaKey, claims(nil)), "bad signature"},
		{"HS512 not accepted", all, sign(t, jwt.SigningMethodHS512, hsKey, claims(nil)), "bad signature"},
		{"RS512 not accepted", all, sign(t, jwt.SigningMethodRS512, rsaKey, claims(nil)), "bad signature"},
		{"malformed", all, "a.b.c", "malformed token"},
		{"too large", all, strings.Repeat("a", auth.MaxTokenBytes+1), "token too large"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := tt.v.Verify(tt.token)
			if tt.reason == "" {
				if err != nil {
					t.Fatal(err)
				}
				if p.Name != "alice" || p.Method != auth.MethodJWT || !p.HoldsTenant("acme") || !p.HasRole(auth.RoleRead) || p.HasRole(auth.RoleOperator) {
					t.Fatalf("principal %+v", p)
				}
				return
			}
			var ce *auth.CredentialError
			if !errors.As(err, &ce) || !errors.Is(err, auth.ErrInvalidCredential) {
				t.Fatalf("err %v (principal %+v), want a CredentialError", err, p)
			}
			if !strings.HasPrefix(ce.Reason, tt.reason) {
				t.Fatalf("reason %q, want %q", ce.Reason, tt.reason)
			}
			if len(tt.token) > 10 && strings.Contains(err.Error(), tt.token) || strings.Contains(err.Error(), string(hsKey)) {
				t.Fatalf("error %q shows a secret", err)
			}
		})
	}
}

func TestJWTCustomClaimsAndLeeway(t *testing.T) {
	v := verifier(t, func(c *auth.JWTConfig) {
		c.TenantsClaim, c.RolesClaim, c.Leeway = "https://factum/tenants", "https://factum/roles", 2*time.Minute
	})
	tok := sign(t, jwt.SigningMethodHS256, hsKey, claims(func(c jwt.MapClaims) {
		delete(c, "tenants")
		delete(c, "roles")
		c["https://factum/tenants"] = "acme,globex"
		c["https://factum/roles"] = []any{"operator", "unknown"}
		c["exp"] = now.Add(-time.Minute).Unix()
	}))
	p, err := v.Verify(tok)
	if err != nil {
		t.Fatal(err)
	}
	if !p.HoldsTenant("globex") || !p.HasRole(auth.RoleOperator) || p.HasRole(auth.RoleSend) || len(p.Roles) != 1 {
		t.Fatalf("principal %+v", p)
	}
	admin, err := v.Verify(sign(t, jwt.SigningMethodES256, ecKey, claims(func(c jwt.MapClaims) {
		delete(c, "tenants")
		c["https://factum/roles"] = "admin"
	})))
	if err != nil || !admin.IsAdmin() {
		t.Fatalf("admin %+v, %v", admin, err)
	}
}

func TestNewJWTVerifierRefusesWeakConfig(t *testing.T) {
	tests := map[string]auth.JWTConfig{
		"no key":        {Issuer: "i", Audience: "a"},
		"short secret":  {HS256Key: []byte("short"), Issuer: "i", Audience: "a"},
		"no issuer":     {HS256Key: hsKey, Audience: "a"},
		"no audience":   {HS256Key: hsKey, Issuer: "i"},
		"negative skew": {HS256Key: hsKey, Issuer: "i", Audience: "a", Leeway: -time.Second},
		"small RSA key": {RS256Key: &mustSmallRSA(t).PublicKey, Issuer: "i", Audience: "a"},
		"P-384 EC key":  {ES256Key: &mustP384(t).PublicKey, Issuer: "i", Audience: "a"},
	}
	for name, cfg := range tests {
		if _, err := auth.NewJWTVerifier(cfg); err == nil {
			t.Errorf("%s: accepted", name)
		} else if strings.Contains(err.Error(), string(hsKey)) {
			t.Errorf("%s: error %q shows the secret", name, err)
		}
	}
}

func mustSmallRSA(t *testing.T) *rsa.PrivateKey {
	t.Helper()
	k, err := rsa.GenerateKey(rand.Reader, 1024)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func mustP384(t *testing.T) *ecdsa.PrivateKey {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P384(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func TestLoadJWTKeys(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, b []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	hs, err := auth.LoadHS256Key(write("hs", append(hsKey, '\n')))
	if err != nil || string(hs) != string(hsKey) {
		t.Fatalf("HS256 key %q, %v", hs, err)
	}
	rs, err := auth.LoadRS256Key(write("rs.pem", pemPublic(t, &rsaKey.PublicKey)))
	if err != nil || !rs.Equal(&rsaKey.PublicKey) {
		t.Fatalf("RS256 key: %v", err)
	}
	es, err := auth.LoadES256Key(write("es.pem", pemPublic(t, &ecKey.PublicKey)))
	if err != nil || !es.Equal(&ecKey.PublicKey) {
		t.Fatalf("ES256 key: %v", err)
	}
	if _, err := auth.LoadRS256Key(write("bad.pem", []byte("not a key"))); err == nil {
		t.Fatal("a bad RS256 key loaded")
	}
	if _, err := auth.LoadES256Key(filepath.Join(dir, "rs.pem")); err == nil {
		t.Fatal("an RSA key loaded as ES256")
	}
	// A token verified end to end with keys from files, through the
	// Authenticator.
	v := verifier(t, func(c *auth.JWTConfig) { c.HS256Key, c.RS256Key, c.ES256Key = nil, rs, nil })
	a, err := auth.New(auth.Config{JWT: v})
	if err != nil {
		t.Fatal(err)
	}
	r, _ := newRequest("Bearer " + sign(t, jwt.SigningMethodRS256, rsaKey, claims(nil)))
	if p, err := a.Authenticate(t.Context(), r); err != nil || p.Name != "alice" {
		t.Fatalf("%+v, %v", p, err)
	}
}
