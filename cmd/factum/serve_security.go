package main

import (
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/factum-go/factum/auth"
	"github.com/factum-go/factum/command"
	"github.com/factum-go/factum/httpapi"
	"github.com/spf13/pflag"
)

// securityOptions are serve's credential, TLS, rate-limit and connection
// settings.
type securityOptions struct {
	// APIKeysFile names a key file (auth.ParseKeys' format).
	APIKeysFile string
	// APIKeys holds key entries inline (FACTUM_API_KEYS): hashes, never
	// keys, so it may sit in an environment.
	APIKeys string
	// JWT keys (files), issuer, audience, skew and claim names.
	JWTHS256KeyFile, JWTRS256KeyFile, JWTES256KeyFile string
	JWTIssuer, JWTAudience                            string
	JWTLeeway                                         time.Duration
	JWTTenantsClaim, JWTRolesClaim                    string
	// IDKeyFile names the file of the deployment secret that keys the
	// aggregate IDs of creates sent without one (engine.Config.IDKey).
	IDKeyFile string
	// Insecure allows serving without credentials on a non-loopback
	// address.
	Insecure bool
	// TLSCert and TLSKey are PEM files; both or neither.
	TLSCert, TLSKey string
	// RateLimit is requests per second per tenant (0: none), RateBurst the
	// burst.
	RateLimit float64
	RateBurst int
	// Server timeouts and caps.
	ReadHeaderTimeout, ReadTimeout, WriteTimeout, IdleTimeout time.Duration
	MaxConns                                                  int
	MaxStreams                                                int
	StreamIdleTimeout                                         time.Duration
}

func addSecurityFlags(f *pflag.FlagSet, o *securityOptions) {
	o.APIKeys = os.Getenv("FACTUM_API_KEYS")
	f.StringVar(&o.APIKeysFile, "api-keys-file", envOr("FACTUM_API_KEYS_FILE", ""), "API key `file`, one key a line: name sha256:<hex> tenants=a,b roles=send,read (FACTUM_API_KEYS_FILE; FACTUM_API_KEYS holds entries inline)")
	f.StringVar(&o.JWTHS256KeyFile, "jwt-hs256-key-file", envOr("FACTUM_JWT_HS256_KEY_FILE", ""), "accept HS256 JWTs signed with the secret in this file (FACTUM_JWT_HS256_KEY_FILE)")
	f.StringVar(&o.JWTRS256KeyFile, "jwt-rs256-key-file", envOr("FACTUM_JWT_RS256_KEY_FILE", ""), "accept RS256 JWTs verified with the PEM public key in this file (FACTUM_JWT_RS256_KEY_FILE)")
	f.StringVar(&o.JWTES256KeyFile, "jwt-es256-key-file", envOr("FACTUM_JWT_ES256_KEY_FILE", ""), "accept ES256 JWTs verified with the PEM public key in this file (FACTUM_JWT_ES256_KEY_FILE)")
	f.StringVar(&o.JWTIssuer, "jwt-issuer", envOr("FACTUM_JWT_ISSUER", ""), "required JWT issuer, the iss claim (FACTUM_JWT_ISSUER)")
	f.StringVar(&o.JWTAudience, "jwt-audience", envOr("FACTUM_JWT_AUDIENCE", ""), "required JWT audience, one of the aud claim (FACTUM_JWT_AUDIENCE)")
	f.DurationVar(&o.JWTLeeway, "jwt-leeway", auth.DefaultLeeway, "clock skew tolerated on exp, nbf and iat")
	f.StringVar(&o.JWTTenantsClaim, "jwt-tenants-claim", auth.DefaultTenantsClaim, "JWT claim listing the tenants")
	f.StringVar(&o.JWTRolesClaim, "jwt-roles-claim", auth.DefaultRolesClaim, "JWT claim listing the roles")
	f.StringVar(&o.IDKeyFile, "id-key-file", envOr("FACTUM_ID_KEY_FILE", ""), "key the IDs of creates sent without an ID with the secret in this `file` (at least 32 bytes, the same on every instance; e.g. openssl rand -base64 48) so no tenant can compute another's (FACTUM_ID_KEY_FILE)")
	f.BoolVar(&o.Insecure, "insecure", false, "serve without credentials on a non-loopback address (anyone who can reach it may do anything)")
	f.StringVar(&o.TLSCert, "tls-cert", envOr("FACTUM_TLS_CERT", ""), "serve HTTPS with this PEM certificate (chain) file (FACTUM_TLS_CERT)")
	f.StringVar(&o.TLSKey, "tls-key", envOr("FACTUM_TLS_KEY", ""), "the PEM private key file of --tls-cert (FACTUM_TLS_KEY)")
	f.Float64Var(&o.RateLimit, "rate-limit", 0, "requests per second per tenant, 429 beyond (0: no limit)")
	f.IntVar(&o.RateBurst, "rate-burst", 0, "burst of --rate-limit (0: the rate, at least 1)")
	f.DurationVar(&o.ReadHeaderTimeout, "read-header-timeout", httpapi.DefaultReadHeaderTimeout, "how long a connection may take to send a request's headers")
	f.DurationVar(&o.ReadTimeout, "read-timeout", httpapi.DefaultReadTimeout, "how long reading a whole request may take")
	f.DurationVar(&o.WriteTimeout, "write-timeout", httpapi.DefaultWriteTimeout, "how long writing a read route's response may take (commands: their wait cap + 10s; event streams: --stream-idle-timeout)")
	f.DurationVar(&o.IdleTimeout, "idle-timeout", httpapi.DefaultIdleTimeout, "how long a keep-alive connection may stay idle")
	f.IntVar(&o.MaxConns, "max-connections", httpapi.DefaultMaxConns, "open connections at most; at the cap idle ones are closed first")
	f.IntVar(&o.MaxStreams, "max-streams", httpapi.DefaultMaxStreams, "concurrent Server-Sent Event streams at most (429 beyond)")
	f.DurationVar(&o.StreamIdleTimeout, "stream-idle-timeout", httpapi.DefaultStreamIdleTimeout, "end an event stream that sent nothing for this long")
}

// access builds the handler's access configuration: the authenticator of
// the configured credentials (none: an open API) and the rate limit, and a
// summary of the credentials for the start-up message, without secrets.
func (o securityOptions) access() (httpapi.AccessConfig, string, error) {
	cfg := httpapi.AccessConfig{RateLimit: httpapi.RateLimit{PerSecond: o.RateLimit, Burst: o.RateBurst}}
	if o.RateLimit < 0 || o.RateBurst < 0 {
		return cfg, "", errors.New("--rate-limit and --rate-burst must not be negative")
	}
	var ac auth.Config
	var what []string
	keys, err := o.keys()
	if err != nil {
		return cfg, "", err
	}
	if keys != nil && keys.Len() > 0 {
		ac.Keys = keys
		what = append(what, fmt.Sprintf("%d API keys", keys.Len()))
	}
	jwtv, err := o.jwt()
	if err != nil {
		return cfg, "", err
	}
	if jwtv != nil {
		ac.JWT = jwtv
		what = append(what, fmt.Sprintf("JWT (%s, issuer %q, audience %q)", strings.Join(jwtv.Algorithms(), ", "), o.JWTIssuer, o.JWTAudience))
	}
	if len(what) == 0 {
		return cfg, "", nil
	}
	if cfg.Authenticator, err = auth.New(ac); err != nil {
		return cfg, "", err
	}
	return cfg, "factum: credentials: " + strings.Join(what, "; "), nil
}

func (o securityOptions) keys() (*auth.KeySet, error) {
	var ks *auth.KeySet
	if o.APIKeysFile != "" {
		k, err := auth.LoadKeys(o.APIKeysFile)
		if err != nil {
			return nil, err
		}
		ks = k
	}
	if strings.TrimSpace(o.APIKeys) != "" {
		k, err := auth.ParseKeys(o.APIKeys)
		if err != nil {
			return nil, fmt.Errorf("FACTUM_API_KEYS: %w", err)
		}
		if ks == nil {
			return k, nil
		}
		return ks.Merge(k)
	}
	return ks, nil
}

func (o securityOptions) jwt() (*auth.JWTVerifier, error) {
	if o.JWTHS256KeyFile == "" && o.JWTRS256KeyFile == "" && o.JWTES256KeyFile == "" {
		if o.JWTIssuer != "" || o.JWTAudience != "" {
			return nil, errors.New("--jwt-issuer and --jwt-audience need a key: --jwt-hs256-key-file, --jwt-rs256-key-file or --jwt-es256-key-file")
		}
		return nil, nil
	}
	cfg := auth.JWTConfig{
		Issuer: o.JWTIssuer, Audience: o.JWTAudience, Leeway: o.JWTLeeway,
		TenantsClaim: o.JWTTenantsClaim, RolesClaim: o.JWTRolesClaim,
	}
	var err error
	if o.JWTHS256KeyFile != "" {
		if cfg.HS256Key, err = auth.LoadHS256Key(o.JWTHS256KeyFile); err != nil {
			return nil, err
		}
	}
	if o.JWTRS256KeyFile != "" {
		if cfg.RS256Key, err = auth.LoadRS256Key(o.JWTRS256KeyFile); err != nil {
			return nil, err
		}
	}
	if o.JWTES256KeyFile != "" {
		if cfg.ES256Key, err = auth.LoadES256Key(o.JWTES256KeyFile); err != nil {
			return nil, err
		}
	}
	return auth.NewJWTVerifier(cfg)
}

// idKey reads --id-key-file: nil without one; an error wrapping
// fs.ErrNotExist (or the read's error) for a file it cannot read, or
// command.ErrIDKeyTooShort for a secret under command.MinIDKeyLen bytes.
// Trailing CR and LF bytes are not part of the secret, as for
// --jwt-hs256-key-file.
func (o securityOptions) idKey() ([]byte, error) {
	if o.IDKeyFile == "" {
		return nil, nil
	}
	b, err := os.ReadFile(o.IDKeyFile)
	if err != nil {
		return nil, fmt.Errorf("--id-key-file: %w", err)
	}
	key := []byte(strings.TrimRight(string(b), "\r\n"))
	if len(key) < command.MinIDKeyLen {
		return nil, fmt.Errorf("--id-key-file %s: %w: %d bytes, want at least %d (make one with openssl rand -base64 48)",
			o.IDKeyFile, command.ErrIDKeyTooShort, len(key), command.MinIDKeyLen)
	}
	return key, nil
}

// idKeyWarning is the start-up warning for a service with credentials,
// which may serve several tenants, and no ID key; empty otherwise.
func idKeyWarning(authenticated bool, key []byte) string {
	if !authenticated || key != nil {
		return ""
	}
	return "factum: WARNING: no --id-key-file (FACTUM_ID_KEY_FILE): the ID of a create sent without an ID is computable from its tenant and request ID, so a tenant that knows or guesses another tenant's request ID can take that create's ID first (it then fails 409) or learn whether the request was made"
}

// streams returns the event-stream limits.
func (o securityOptions) streams() httpapi.StreamLimits {
	return httpapi.StreamLimits{MaxStreams: o.MaxStreams, IdleTimeout: o.StreamIdleTimeout}
}

// listening is what secure made of a listener.
type listening struct {
	ln     net.Listener
	conns  *httpapi.ConnLimiter
	scheme string
	// warning, if set, is printed after the start-up line.
	warning string
}

// secure checks that ln may serve (an open API only on a loopback
// address, unless --insecure), caps its connections and adds TLS when
// configured.
func (o securityOptions) secure(ln net.Listener, authenticated bool) (listening, error) {
	if o.MaxConns < 0 || o.MaxStreams < 0 {
		return listening{}, errors.New("--max-connections and --max-streams must not be negative")
	}
	var out listening
	loopback := isLoopback(ln.Addr())
	switch {
	case !authenticated && !loopback && !o.Insecure:
		return out, fmt.Errorf("refusing to serve %s without credentials: configure --api-keys-file, FACTUM_API_KEYS or --jwt-*-key-file, listen on a loopback address, or pass --insecure", ln.Addr())
	case !authenticated && !loopback:
		out.warning = fmt.Sprintf("factum: WARNING: --insecure: no credentials, and %s is not a loopback address: anyone who can reach it may do anything", ln.Addr())
	case !authenticated:
		out.warning = "factum: WARNING: no credentials configured: the API is open to every local user (loopback only)"
	}
	if (o.TLSCert == "") != (o.TLSKey == "") {
		return out, errors.New("--tls-cert and --tls-key go together")
	}
	out.conns = httpapi.NewConnLimiter(o.MaxConns)
	out.ln, out.scheme = out.conns.Listen(ln), "http"
	if o.TLSCert == "" {
		if authenticated && !loopback {
			out.warning = "factum: WARNING: credentials travel in clear text: serve behind TLS (--tls-cert, --tls-key) or a TLS proxy"
		}
		return out, nil
	}
	cert, err := tls.LoadX509KeyPair(o.TLSCert, o.TLSKey)
	if err != nil {
		return out, fmt.Errorf("TLS: %w", err)
	}
	out.ln = tls.NewListener(out.ln, &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12})
	out.scheme = "https"
	return out, nil
}

// httpServer returns the server of h with the configured timeouts.
func (o securityOptions) httpServer(h http.Handler, lim *httpapi.ConnLimiter) *http.Server {
	return httpapi.NewServer(h, httpapi.ServerConfig{
		ReadHeaderTimeout: o.ReadHeaderTimeout, ReadTimeout: o.ReadTimeout,
		WriteTimeout: o.WriteTimeout, IdleTimeout: o.IdleTimeout, Limiter: lim,
	})
}

// isLoopback reports whether a listener's address is a loopback one; an
// unspecified address (all interfaces) is not.
func isLoopback(a net.Addr) bool {
	switch a := a.(type) {
	case *net.TCPAddr:
		return a.IP.IsLoopback()
	case *net.UnixAddr:
		return true
	}
	host, _, err := net.SplitHostPort(a.String())
	if err != nil {
		return false
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
