package main

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/factum-go/factum/auth"
	"github.com/golang-jwt/jwt/v5"
)

// startWith starts the service with opts on memory storage, returning it
// and its log; it stops at cleanup.
func startWith(t *testing.T, opts serveOptions) (*server, *bytes.Buffer) {
	t.Helper()
	var log bytes.Buffer
	opts.Memory = true
	return startForTest(t, opts, &log), &log
}

func withKeys(opts serveOptions, entries ...string) serveOptions {
	opts.APIKeys = strings.Join(entries, "\n")
	return opts
}

// The open-API rule: without credentials serve runs only on a loopback
// address (with a warning), and elsewhere only with --insecure.
func TestServeOpenOnlyOnLoopback(t *testing.T) {
	key := "fk_loopback-rule-0123456789abcdefgh"
	entry := "ops " + auth.HashKey(key) + " roles=admin"
	tests := []struct {
		name    string
		opts    serveOptions
		refused bool
		warning string
	}{
		{"loopback, open", serveOptions{Addr: "127.0.0.1:0"}, false, "no credentials configured"},
		{"localhost, open", serveOptions{Addr: "localhost:0"}, false, "no credentials configured"},
		{"all interfaces, open", serveOptions{Addr: "0.0.0.0:0"}, true, ""},
		{"all interfaces by port only, open", serveOptions{Addr: ":0"}, true, ""},
		{"all interfaces, --insecure", serveOptions{Addr: "0.0.0.0:0", securityOptions: securityOptions{Insecure: true}}, false, "--insecure"},
		{"all interfaces, with keys", withKeys(serveOptions{Addr: "0.0.0.0:0"}, entry), false, "clear text"},
		{"loopback, with keys", withIDKey(t, withKeys(serveOptions{Addr: "127.0.0.1:0"}, entry)), false, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var log bytes.Buffer
			tt.opts.Memory = true
			s, err := startServer(context.Background(), tt.opts, &log)
			if tt.refused {
				if err == nil {
					stopServer(t, s)
					t.Fatal("started without credentials on a non-loopback address")
				}
				if !strings.Contains(err.Error(), "refusing to serve") || !strings.Contains(err.Error(), "--insecure") {
					t.Fatalf("error %q does not say why and what to do", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			defer stopServer(t, s)
			if tt.warning == "" && strings.Contains(log.String(), "WARNING") || !strings.Contains(log.String(), tt.warning) {
				t.Fatalf("log %q, want the warning %q", log.String(), tt.warning)
			}
			if strings.Contains(log.String(), key) || strings.Contains(log.String(), auth.HashKey(key)[len(auth.HashPrefix):]) {
				t.Fatalf("the log shows a key: %s", log.String())
			}
		})
	}
	// The same rule through the command line.
	var out, errOut bytes.Buffer
	if code := run(context.Background(), []string{"serve", "--memory", "--addr", "0.0.0.0:0"}, &out, &errOut); code == 0 || !strings.Contains(errOut.String(), "refusing to serve") {
		t.Fatalf("serve on 0.0.0.0 without credentials: exit %d, %s", code, errOut.String())
	}
}

// serve accepts JWTs with keys from files; the secret stays out of the
// log, the answers and the document.
func TestServeWithJWT(t *testing.T) {
	dir := t.TempDir()
	secret := "a-jwt-secret-of-more-than-thirty-two-bytes-0123"
	hsFile := filepath.Join(dir, "hs256.key")
	if err := os.WriteFile(hsFile, []byte(secret+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	opts := serveOptions{Addr: "127.0.0.1:0"}
	opts.JWTHS256KeyFile, opts.JWTIssuer, opts.JWTAudience = hsFile, "https://id.example", "factum-shop"
	opts.JWTTenantsClaim, opts.JWTRolesClaim, opts.JWTLeeway = "tenants", "roles", time.Second
	s, log := startWith(t, opts)
	token := func(edit func(jwt.MapClaims)) string {
		c := jwt.MapClaims{"iss": "https://id.example", "aud": "factum-shop", "sub": "svc-checkout",
			"exp": time.Now().Add(time.Hour).Unix(), "tenants": []any{"acme"}, "roles": []any{"send", "read"}}
		if edit != nil {
			edit(c)
		}
		tok, err := jwt.NewWithClaims(jwt.SigningMethodHS256, c).SignedString([]byte(secret))
		if err != nil {
			t.Fatal(err)
		}
		return tok
	}
	good := token(nil)
	status, _, b := callAs(t, "POST", s.URL+"/cart/c-1/add_item", `{"sku":"sku-1","qty":1}`, "", "Authorization", "Bearer "+good)
	if status != http.StatusOK || !strings.Contains(string(b), `"tenant":"acme"`) {
		t.Fatalf("with a token: %d %s", status, b)
	}
	status, _, b = callAs(t, "GET", s.URL+"/tenant/acme/cart/c-1/event/1/1", "", "", "Authorization", "Bearer "+good)
	if status != http.StatusOK || !strings.Contains(string(b), `"factum.principal":"svc-checkout"`) {
		t.Fatalf("events: %d %s", status, b)
	}
	var bodies []string
	for _, tok := range []string{
		token(func(c jwt.MapClaims) { c["exp"] = time.Now().Add(-time.Minute).Unix() }),
		token(func(c jwt.MapClaims) { c["aud"] = "other" }),
		token(func(c jwt.MapClaims) { c["iss"] = "https://evil.example" }),
	} {
		status, hdr, b := callAs(t, "GET", s.URL+"/cart/c-1/state", "", "", "Authorization", "Bearer "+tok)
		if status != http.StatusUnauthorized || !strings.Contains(hdr.Get("WWW-Authenticate"), "invalid_token") {
			t.Fatalf("bad token: %d %s", status, b)
		}
		bodies = append(bodies, string(b))
	}
	_, _, doc := callAs(t, "GET", s.URL+"/openapi.json", "", "")
	for _, where := range append(bodies, log.String(), string(doc)) {
		if strings.Contains(where, secret) || strings.Contains(where, good) {
			t.Fatalf("a secret appears in %s", where)
		}
	}
	if !strings.Contains(log.String(), "JWT (HS256") {
		t.Fatalf("log %q does not say which credentials are accepted", log.String())
	}
}

// selfSigned writes a certificate for 127.0.0.1 and its key.
func selfSigned(t *testing.T) (certFile, keyFile string, pool *x509.CertPool) {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "factum test"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, KeyUsage: x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &k.PublicKey, k)
	if err != nil {
		t.Fatal(err)
	}
	kder, err := x509.MarshalPKCS8PrivateKey(k)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	certFile, keyFile = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	if err := os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: kder}), 0o600); err != nil {
		t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	pool = x509.NewCertPool()
	pool.AddCert(cert)
	return certFile, keyFile, pool
}

func TestServeTLS(t *testing.T) {
	certFile, keyFile, pool := selfSigned(t)
	key := "fk_tls-test-0123456789abcdefghijklm"
	opts := withKeys(serveOptions{Addr: "127.0.0.1:0"}, "ops "+auth.HashKey(key)+" roles=admin")
	opts.TLSCert, opts.TLSKey = certFile, keyFile
	s, _ := startWith(t, opts)
	if !strings.HasPrefix(s.URL, "https://") {
		t.Fatalf("URL %s", s.URL)
	}
	c := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	req, _ := http.NewRequest("GET", s.URL+"/cart/c-1/state", nil)
	req.Header.Set(auth.HeaderAPIKey, key)
	res, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusNotFound {
		t.Fatalf("over TLS: %d", res.StatusCode)
	}
	if res, err := http.Get("http://" + strings.TrimPrefix(s.URL, "https://") + "/healthz"); err == nil {
		res.Body.Close()
		if res.StatusCode == http.StatusOK {
			t.Fatal("plain HTTP answered on the TLS port")
		}
	}
	var errOut bytes.Buffer
	if code := run(context.Background(), []string{"serve", "--memory", "--addr", "127.0.0.1:0", "--tls-cert", certFile}, &bytes.Buffer{}, &errOut); code == 0 || !strings.Contains(errOut.String(), "go together") {
		t.Fatalf("--tls-cert alone: exit %d, %s", code, errOut.String())
	}
}

// The operator routes (not in /openapi.json, so not in the matrix) need
// the operator role in the path's tenant.
func TestServeOperatorRoutesNeedOperator(t *testing.T) {
	opts := serveOptions{Addr: "127.0.0.1:0"}
	opts.APIKeysFile = writeMatrixKeys(t)
	s, _ := startWith(t, opts)
	if status, _, b := callAs(t, "POST", s.URL+"/tenant/acme/cart/c-1/add_item", `{"sku":"sku-1","qty":1}`, matrixKey("acme", "send"), "Command-Wait-Stage", "SNAPSHOT"); status != http.StatusOK {
		t.Fatalf("seed: %d %s", status, b)
	}
	tests := []struct {
		method, path, body, key string
		want                    int
	}{
		{"GET", "/tenant/acme/compensation/executions", "", "", http.StatusUnauthorized},
		{"GET", "/tenant/acme/compensation/executions", "", matrixKey("acme", "nooperator"), http.StatusForbidden},
		{"GET", "/tenant/acme/compensation/executions", "", matrixKey("globex", "operator"), http.StatusNotFound},
		{"GET", "/tenant/acme/compensation/executions", "", matrixKey("acme", "operator"), http.StatusOK},
		{"GET", "/compensation/counts", "", matrixKey("acme", "operator"), http.StatusOK},
		{"GET", "/compensation/counts", "", matrixKey("acme", "read"), http.StatusForbidden},
		{"POST", "/tenant/acme/compensation/executions/x/retry", "", matrixKey("acme", "send"), http.StatusForbidden},
		{"PUT", "/tenant/acme/cart/c-1/snapshot", "", matrixKey("acme", "read"), http.StatusForbidden},
		{"PUT", "/tenant/acme/cart/c-1/snapshot", "", matrixKey("acme", "operator"), http.StatusOK},
		{"PUT", "/tenant/acme/cart/c-1/snapshot", "", matrixKey("globex", "operator"), http.StatusNotFound},
	}
	for _, tt := range tests {
		status, _, b := callAs(t, tt.method, s.URL+tt.path, tt.body, tt.key)
		if status != tt.want {
			t.Errorf("%s %s with %q: %d %s, want %d", tt.method, tt.path, tt.key, status, b, tt.want)
		}
	}
}

// The flags reach the server: serve with a key file and a rate limit from
// the command line.
func TestServeSecurityFlags(t *testing.T) {
	keys := writeMatrixKeys(t)
	url := serveInProcess(t, "--memory", "--addr", "127.0.0.1:0", "--api-keys-file", keys,
		"--rate-limit", "0.001", "--rate-burst", "2", "--max-connections", "64", "--read-header-timeout", "2s")
	if status, _, b := callAs(t, "GET", url+"/cart/c-1/state", "", ""); status != http.StatusUnauthorized {
		t.Fatalf("without a key: %d %s", status, b)
	}
	for i := range 2 {
		if status, _, b := callAs(t, "GET", url+"/cart/c-1/state", "", matrixKey("acme", "read")); status != http.StatusNotFound {
			t.Fatalf("request %d: %d %s", i, status, b)
		}
	}
	status, hdr, b := callAs(t, "GET", url+"/cart/c-1/state", "", matrixKey("acme", "read"))
	if status != http.StatusTooManyRequests || hdr.Get("Retry-After") == "" {
		t.Fatalf("over the rate: %d %s (Retry-After %q)", status, b, hdr.Get("Retry-After"))
	}
}

// FACTUM_API_KEYS is read (an invalid entry stops serve, naming the
// variable but not the entry's hash).
func TestServeReadsAPIKeysFromTheEnvironment(t *testing.T) {
	t.Setenv("FACTUM_API_KEYS", "ops sha256:00112233 roles=admin")
	var errOut bytes.Buffer
	code := run(context.Background(), []string{"serve", "--memory", "--addr", "127.0.0.1:0"}, &bytes.Buffer{}, &errOut)
	if code == 0 || !strings.Contains(errOut.String(), "FACTUM_API_KEYS") || strings.Contains(errOut.String(), "00112233") {
		t.Fatalf("exit %d, %s", code, errOut.String())
	}
}
