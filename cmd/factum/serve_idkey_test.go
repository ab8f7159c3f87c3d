package main

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/auth"
	"github.com/factum-go/factum/command"
	"github.com/factum-go/factum/examples/order"
)

// writeIDKey writes secret to a file of its own and returns its path.
func writeIDKey(t *testing.T, secret string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "id.key")
	if err := os.WriteFile(path, []byte(secret), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

const testIDSecret = "an-ID-key-of-more-than-thirty-two-bytes-0123456789\n"

// With --id-key-file, a tenant that knows another tenant's request ID
// cannot compute the ID that tenant's create without an ID will get: it
// can neither take it first (the victim's create answers 200, not 409)
// nor learn from a 409 that the request was made.
func TestServeIDKeyStopsCreateIDTakeover(t *testing.T) {
	url := serveInProcess(t, "--memory", "--addr", "127.0.0.1:0", "--api-keys-file", writeMatrixKeys(t),
		"--id-key-file", writeIDKey(t, testIDSecret))
	victim, attacker := matrixKey("acme", "send"), matrixKey("globex", "send")
	named := factum.NamedAggregate{Context: order.Context, Aggregate: "order"}
	const body = `{"sku":"i-1a","qty":1}`

	// The attacker computes the ID the victim's request req-victim-1
	// gets without a key, and creates it first in its own tenant.
	guess := command.CreateID(named, "acme", "req-victim-1")
	status, _, b := callAs(t, "POST", url+"/tenant/globex/order/"+guess+"/place_order", body, attacker)
	if status != http.StatusOK {
		t.Fatalf("the attacker's create of %s: %d %s", guess, status, b)
	}
	status, hdr, b := callAs(t, "POST", url+"/tenant/acme/order/place_order", body, victim, "Command-Request-Id", "req-victim-1")
	if status != http.StatusOK && status != http.StatusCreated {
		t.Fatalf("the victim's create after the attacker's: %d %s, want 200 or 201", status, b)
	}
	id := hdr.Get("Command-Aggregate-Id")
	if id == "" || id == guess {
		t.Fatalf("the victim's create got ID %q, the attacker's guess is %s", id, guess)
	}
	// A retry finds the first attempt under the same ID.
	status, hdr, b = callAs(t, "POST", url+"/tenant/acme/order/place_order", body, victim, "Command-Request-Id", "req-victim-1")
	if status != http.StatusOK || hdr.Get("Command-Aggregate-Id") != id || !strings.Contains(string(b), `"duplicate":true`) {
		t.Fatalf("the victim's retry: %d %s (ID %s), want its first attempt's outcome under %s", status, b, hdr.Get("Command-Aggregate-Id"), id)
	}
	// The probe: after the victim's request req-victim-2, a create of the
	// ID that request gets without a key is free, not 409 "taken".
	if status, _, b := callAs(t, "POST", url+"/tenant/acme/order/place_order", body, victim, "Command-Request-Id", "req-victim-2"); status != http.StatusOK {
		t.Fatalf("the victim's second create: %d %s", status, b)
	}
	probe := command.CreateID(named, "acme", "req-victim-2")
	if status, _, b := callAs(t, "POST", url+"/tenant/globex/order/"+probe+"/place_order", body, attacker); status != http.StatusOK {
		t.Fatalf("the attacker's probe of %s: %d %s, want 200 (nothing tells it the request was made)", probe, status, b)
	}
}

// --id-key-file and FACTUM_ID_KEY_FILE: a missing file and a short key
// stop serve with an error naming the flag and the cause, never the
// secret; a good key is accepted from either.
func TestServeIDKeyFile(t *testing.T) {
	short := "too-short-secret"
	tests := []struct {
		name    string
		file    string
		env     bool
		wantErr error
	}{
		{"missing file", filepath.Join(t.TempDir(), "absent.key"), false, fs.ErrNotExist},
		{"short key", writeIDKey(t, short+"\r\n"), false, command.ErrIDKeyTooShort},
		{"empty file", writeIDKey(t, "\n"), false, command.ErrIDKeyTooShort},
		{"short key from the environment", writeIDKey(t, short), true, command.ErrIDKeyTooShort},
		{"good key", writeIDKey(t, testIDSecret), false, nil},
		{"good key from the environment", writeIDKey(t, testIDSecret), true, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			opts := serveOptions{Addr: "127.0.0.1:0"}
			opts.IDKeyFile = tt.file
			_, err := opts.idKey()
			var msg string
			if err != nil {
				msg = err.Error()
			}
			if !errors.Is(err, tt.wantErr) || (tt.wantErr == nil) != (err == nil) {
				t.Fatalf("error %v, want %v", err, tt.wantErr)
			}
			if err != nil && (!strings.Contains(err.Error(), "--id-key-file") || strings.Contains(err.Error(), short)) {
				t.Fatalf("error %q does not name the flag, or shows the secret", err)
			}
			args := []string{"serve", "--memory", "--addr", "127.0.0.1:0"}
			if tt.env {
				t.Setenv("FACTUM_ID_KEY_FILE", tt.file)
			} else {
				args = append(args, "--id-key-file", tt.file)
			}
			if tt.wantErr == nil {
				serveInProcess(t, args[1:]...)
				return
			}
			var out, errOut bytes.Buffer
			code := run(context.Background(), args, &out, &errOut)
			if code == 0 || !strings.Contains(errOut.String(), msg) ||
				strings.Contains(errOut.String()+out.String(), short) {
				t.Fatalf("exit %d, %s", code, errOut.String())
			}
		})
	}
}

// serve warns once at start-up when it has credentials, so may serve
// several tenants, and no ID key; not with a key, nor without credentials
// (whose own warning says the API is open).
func TestServeWarnsWithoutIDKey(t *testing.T) {
	entry := "ops " + auth.HashKey(matrixKey("acme", "all")) + " roles=admin"
	tests := []struct {
		name string
		opts serveOptions
		warn bool
	}{
		{"credentials, no key", withKeys(serveOptions{Addr: "127.0.0.1:0"}, entry), true},
		{"credentials and a key", withIDKey(t, withKeys(serveOptions{Addr: "127.0.0.1:0"}, entry)), false},
		{"no credentials", serveOptions{Addr: "127.0.0.1:0"}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, log := startWith(t, tt.opts)
			if n := strings.Count(log.String(), "--id-key-file"); n != map[bool]int{true: 1}[tt.warn] {
				t.Fatalf("%d ID-key warnings in %q, want warning %v", n, log.String(), tt.warn)
			}
			if tt.warn && !strings.Contains(log.String(), "WARNING") {
				t.Fatalf("log %q: the ID-key line is not a warning", log.String())
			}
			if strings.Contains(log.String(), strings.TrimSpace(testIDSecret)) {
				t.Fatalf("the log shows the ID key: %s", log.String())
			}
		})
	}
}

// withIDKey sets a good --id-key-file on opts.
func withIDKey(t *testing.T, opts serveOptions) serveOptions {
	t.Helper()
	opts.IDKeyFile = writeIDKey(t, testIDSecret)
	return opts
}
