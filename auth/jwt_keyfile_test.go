package auth_test

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"io/fs"
	"math/big"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/factum-go/factum/auth"
	"github.com/golang-jwt/jwt/v5"
)

// pemBlock encodes der as one PEM block of type typ.
func pemBlock(typ string, der []byte) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der})
}

// pemCertificate returns a self-signed certificate for key's public key,
// PEM-encoded.
func pemCertificate(t *testing.T, key any, pub any) []byte {
	t.Helper()
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "factum test"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(time.Hour)}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, pub, key)
	if err != nil {
		t.Fatal(err)
	}
	return pemBlock("CERTIFICATE", der)
}

// pkcs8 returns key's PKCS#8 encoding.
func pkcs8(t *testing.T, key any) []byte {
	t.Helper()
	der, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	return der
}

// TestLoadPEMKeyFiles checks which PEM forms the RS256 and ES256 loaders
// accept, and that a refusal names the algorithm and the file and wraps
// the cause.
func TestLoadPEMKeyFiles(t *testing.T) {
	dir := t.TempDir()
	ecDER, err := x509.MarshalECPrivateKey(ecKey)
	if err != nil {
		t.Fatal(err)
	}
	rsaPKIX, ecPKIX := pemPublic(t, &rsaKey.PublicKey), pemPublic(t, &ecKey.PublicKey)
	files := map[string][]byte{
		"rsa-pkix":      rsaPKIX,
		"rsa-pkcs1":     pemBlock("RSA PUBLIC KEY", x509.MarshalPKCS1PublicKey(&rsaKey.PublicKey)),
		"rsa-cert":      pemCertificate(t, rsaKey, &rsaKey.PublicKey),
		"rsa-pkcs8":     pemBlock("PRIVATE KEY", pkcs8(t, rsaKey)),
		"rsa-pkcs1-key": pemBlock("RSA PRIVATE KEY", x509.MarshalPKCS1PrivateKey(rsaKey)),
		"ec-pkix":       ecPKIX,
		"ec-cert":       pemCertificate(t, ecKey, &ecKey.PublicKey),
		"ec-pkcs8":      pemBlock("PRIVATE KEY", pkcs8(t, ecKey)),
		"ec-sec1":       pemBlock("EC PRIVATE KEY", ecDER),
		"not-pem":       []byte("not a key\n"),
	}
	for name, b := range files {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	rs := func(path string) (any, error) { return auth.LoadRS256Key(path) }
	es := func(path string) (any, error) { return auth.LoadES256Key(path) }
	tests := []struct {
		alg  string
		load func(string) (any, error)
		file string
		// want is nil for a refusal; cause is what the refusal wraps
		// (nil: any parse error).
		want  any
		cause error
	}{
		{"RS256", rs, "rsa-pkix", &rsaKey.PublicKey, nil},
		{"RS256", rs, "rsa-pkcs1", &rsaKey.PublicKey, nil},
		{"RS256", rs, "rsa-cert", &rsaKey.PublicKey, nil},
		{"RS256", rs, "rsa-pkcs8", nil, nil},
		{"RS256", rs, "rsa-pkcs1-key", nil, nil},
		{"RS256", rs, "ec-pkix", nil, jwt.ErrNotRSAPublicKey},
		{"RS256", rs, "ec-cert", nil, jwt.ErrNotRSAPublicKey},
		{"RS256", rs, "not-pem", nil, jwt.ErrKeyMustBePEMEncoded},
		{"ES256", es, "ec-pkix", &ecKey.PublicKey, nil},
		{"ES256", es, "ec-cert", &ecKey.PublicKey, nil},
		{"ES256", es, "ec-pkcs8", nil, nil},
		{"ES256", es, "ec-sec1", nil, nil},
		{"ES256", es, "rsa-pkix", nil, jwt.ErrNotECPublicKey},
		{"ES256", es, "rsa-cert", nil, jwt.ErrNotECPublicKey},
		{"ES256", es, "rsa-pkcs1", nil, nil},
		{"ES256", es, "not-pem", nil, jwt.ErrKeyMustBePEMEncoded},
	}
	for _, tt := range tests {
		t.Run(tt.alg+"/"+tt.file, func(t *testing.T) {
			path := filepath.Join(dir, tt.file)
			got, err := tt.load(path)
			if tt.want != nil {
				type equaler interface{ Equal(x crypto.PublicKey) bool }
				if err != nil || !got.(equaler).Equal(tt.want) {
					t.Fatalf("got %v, %v; want the key", got, err)
				}
				return
			}
			if err == nil {
				t.Fatalf("loaded %T from %s", got, tt.file)
			}
			if prefix := "auth: " + tt.alg + " key file " + path + ": "; !strings.HasPrefix(err.Error(), prefix) {
				t.Errorf("error %q, want the prefix %q", err, prefix)
			}
			if tt.cause != nil && !errors.Is(err, tt.cause) {
				t.Errorf("error %q does not wrap %q", err, tt.cause)
			}
		})
	}
	// A key on another curve loads; the verifier refuses it.
	p384, err := ecdsa.GenerateKey(elliptic.P384(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "ec-p384")
	if err := os.WriteFile(path, pemPublic(t, &p384.PublicKey), 0o600); err != nil {
		t.Fatal(err)
	}
	k, err := auth.LoadES256Key(path)
	if err != nil || !k.Equal(&p384.PublicKey) {
		t.Fatalf("a P-384 key: %v, %v; want it loaded", k, err)
	}
	if _, err := auth.NewJWTVerifier(auth.JWTConfig{ES256Key: k, Issuer: "https://issuer.example", Audience: "factum"}); err == nil ||
		!strings.Contains(err.Error(), "P-256") {
		t.Errorf("a verifier of a P-384 key: %v, want a refusal naming P-256", err)
	}
	for alg, load := range map[string]func(string) (any, error){"RS256": rs, "ES256": es, "HS256": func(p string) (any, error) { return auth.LoadHS256Key(p) }} {
		_, err := load(filepath.Join(dir, "missing"))
		if !errors.Is(err, fs.ErrNotExist) || !strings.HasPrefix(err.Error(), "auth: "+alg+" key file: ") {
			t.Errorf("%s from a missing file: %v, want a wrapped fs.ErrNotExist", alg, err)
		}
	}
}

// TestLoadHS256KeyTrimsTrailingLineEnds checks that the HS256 loader drops
// every trailing CR and LF, and nothing else.
func TestLoadHS256KeyTrimsTrailingLineEnds(t *testing.T) {
	dir := t.TempDir()
	for _, tt := range []struct{ file, want string }{
		{"secret", "secret"},
		{"secret\n", "secret"},
		{"secret\r\n", "secret"},
		{"secret\n\n\r\n", "secret"},
		{"sec\nret\n", "sec\nret"},
		{" secret \n", " secret "},
		{"\n", ""},
	} {
		path := filepath.Join(dir, "key")
		if err := os.WriteFile(path, []byte(tt.file), 0o600); err != nil {
			t.Fatal(err)
		}
		if got, err := auth.LoadHS256Key(path); err != nil || string(got) != tt.want {
			t.Errorf("LoadHS256Key of %q = %q, %v; want %q", tt.file, got, err, tt.want)
		}
	}
}
