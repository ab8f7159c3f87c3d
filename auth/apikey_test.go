package auth_test

import (
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/factum-go/factum/auth"
)

func TestParseKeys(t *testing.T) {
	h1, h2 := auth.HashKey("key-one-0123456789abcdef"), auth.HashKey("key-two-0123456789abcdef")
	tests := []struct {
		name, text string
		wantErr    string
		wantLen    int
	}{
		{"two keys and comments", "# keys\n\nbot " + h1 + " tenants=acme,globex roles=send,read\nops " + h2 + " roles=admin\n", "", 2},
		{"semicolons", "bot " + h1 + " tenants=acme roles=send; ops " + h2 + " roles=admin", "", 2},
		{"plain key instead of hash", "bot key-one tenants=acme roles=send", "store the hash", 0},
		{"short hash", "bot sha256:abcd tenants=acme roles=send", "64 hex digits", 0},
		{"unknown role", "bot " + h1 + " tenants=acme roles=send,root", "unknown role", 0},
		{"no tenant", "bot " + h1 + " roles=send", "holds no tenant", 0},
		{"no role", "bot " + h1 + " tenants=acme roles=", "no role", 0},
		{"bad tenant", "bot " + h1 + " tenants=a/b roles=send", "tenant", 0},
		{"unknown field", "bot " + h1 + " tenants=acme roles=send owner=x", "unknown field", 0},
		{"duplicate name", "bot " + h1 + " tenants=acme roles=send\nbot " + h2 + " tenants=acme roles=send", "used twice", 0},
		{"duplicate hash", "bot " + h1 + " tenants=acme roles=send\nbot2 " + h1 + " tenants=acme roles=send", "used twice", 0},
		{"bad name", "b/t " + h1 + " tenants=acme roles=send", "key name", 0},
		{"too few fields", "bot " + h1, "want <name>", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ks, err := auth.ParseKeys(tt.text)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err %v, want one containing %q", err, tt.wantErr)
				}
				if strings.Contains(err.Error(), strings.TrimPrefix(h1, auth.HashPrefix)) {
					t.Fatalf("error %q shows a hash", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if ks.Len() != tt.wantLen {
				t.Fatalf("%d keys, want %d", ks.Len(), tt.wantLen)
			}
		})
	}
}

func TestKeySetVerify(t *testing.T) {
	ks, err := auth.ParseKeys("bot " + auth.HashKey("secret-bot-key-0123456789") + " tenants=acme roles=send,read\n" +
		"ops " + auth.HashKey("secret-ops-key-0123456789") + " roles=admin")
	if err != nil {
		t.Fatal(err)
	}
	p, err := ks.Verify("secret-bot-key-0123456789")
	if err != nil {
		t.Fatal(err)
	}
	if p.Name != "bot" || p.Method != auth.MethodAPIKey || !p.HoldsTenant("acme") || p.HoldsTenant("globex") ||
		!p.HasRole(auth.RoleSend) || p.HasRole(auth.RoleOperator) || p.HomeTenant() != "acme" {
		t.Fatalf("principal %+v", p)
	}
	p.Tenants[0] = "changed"
	if again, _ := ks.Verify("secret-bot-key-0123456789"); again.Tenants[0] != "acme" {
		t.Fatal("a returned principal shares its slices with the key set")
	}
	admin, err := ks.Verify("secret-ops-key-0123456789")
	if err != nil || !admin.IsAdmin() || !admin.HoldsTenant("anything") || !admin.HasRole(auth.RoleOperator) || admin.HomeTenant() != "default" {
		t.Fatalf("admin %+v, %v", admin, err)
	}
	for _, wrong := range []string{"", "secret-bot-key-012345678", "secret-bot-key-0123456789 ", auth.HashKey("secret-bot-key-0123456789")} {
		_, err := ks.Verify(wrong)
		var ce *auth.CredentialError
		if !errors.Is(err, auth.ErrInvalidCredential) || !errors.As(err, &ce) || ce.Reason != "unknown key" {
			t.Fatalf("Verify(%q) = %v, want an unknown-key CredentialError", wrong, err)
		}
		if wrong != "" && strings.Contains(err.Error(), wrong) {
			t.Fatalf("error %q shows the presented key", err)
		}
	}
}

func TestLoadKeysAndMerge(t *testing.T) {
	path := filepath.Join(t.TempDir(), "keys")
	if err := os.WriteFile(path, []byte("bot "+auth.HashKey("k1-0123456789abcdef")+" tenants=acme roles=send\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	a, err := auth.LoadKeys(path)
	if err != nil {
		t.Fatal(err)
	}
	b, err := auth.ParseKeys("ci " + auth.HashKey("k2-0123456789abcdef") + " tenants=acme roles=read")
	if err != nil {
		t.Fatal(err)
	}
	m, err := a.Merge(b)
	if err != nil || m.Len() != 2 {
		t.Fatalf("merge: %v", err)
	}
	if _, err := m.Merge(b); err == nil {
		t.Fatal("merging a key twice succeeded")
	}
	if _, err := auth.LoadKeys(filepath.Join(t.TempDir(), "missing")); err == nil {
		t.Fatal("a missing file loaded")
	}
}

func TestNewKey(t *testing.T) {
	a, err := auth.NewKey()
	if err != nil {
		t.Fatal(err)
	}
	b, _ := auth.NewKey()
	if a == b || !strings.HasPrefix(a, "fk_") || len(a) < 40 {
		t.Fatalf("keys %q %q", a, b)
	}
}

func TestAuthorize(t *testing.T) {
	p := auth.Principal{Name: "bot", Tenants: []string{"acme"}, Roles: []auth.Role{auth.RoleRead}}
	tests := []struct {
		tenant string
		role   auth.Role
		want   error
	}{
		{"acme", auth.RoleRead, nil},
		{"acme", auth.RoleSend, auth.ErrRoleMissing},
		{"globex", auth.RoleRead, auth.ErrTenantNotHeld},
		{"globex", auth.RoleSend, auth.ErrTenantNotHeld},
	}
	for _, tt := range tests {
		err := auth.Authorize(p, tt.tenant, tt.role)
		if !errors.Is(err, tt.want) || (tt.want == nil) != (err == nil) {
			t.Errorf("Authorize(%s, %s) = %v, want %v", tt.tenant, tt.role, err, tt.want)
		}
		var ae *auth.AccessError
		if err != nil && (!errors.As(err, &ae) || ae.Tenant != tt.tenant) {
			t.Errorf("error %v is no AccessError for %s", err, tt.tenant)
		}
	}
	if _, err := auth.ParseRole("Operator"); err != nil {
		t.Fatal(err)
	}
}

func TestAuthenticatorCredentials(t *testing.T) {
	ks, err := auth.ParseKeys("bot " + auth.HashKey("bot-key-0123456789abcdef") + " tenants=acme roles=send")
	if err != nil {
		t.Fatal(err)
	}
	a, err := auth.New(auth.Config{Keys: ks})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		headers map[string][]string
		want    error
	}{
		{"none", nil, auth.ErrNoCredential},
		{"x-api-key", map[string][]string{"X-Api-Key": {"bot-key-0123456789abcdef"}}, nil},
		{"bearer key", map[string][]string{"Authorization": {"Bearer bot-key-0123456789abcdef"}}, nil},
		{"bearer lower case", map[string][]string{"Authorization": {"bearer bot-key-0123456789abcdef"}}, nil},
		{"wrong key", map[string][]string{"X-Api-Key": {"nope"}}, auth.ErrInvalidCredential},
		{"basic", map[string][]string{"Authorization": {"Basic Ym90OmtleQ=="}}, auth.ErrInvalidCredential},
		{"two credentials", map[string][]string{"X-Api-Key": {"bot-key-0123456789abcdef"}, "Authorization": {"Bearer bot-key-0123456789abcdef"}}, auth.ErrInvalidCredential},
		{"jwt without verifier", map[string][]string{"Authorization": {"Bearer a.b.c"}}, auth.ErrInvalidCredential},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, _ := http.NewRequest("GET", "/", nil)
			for k, vs := range tt.headers {
				for _, v := range vs {
					r.Header.Add(k, v)
				}
			}
			p, err := a.Authenticate(t.Context(), r)
			if tt.want == nil {
				if err != nil || p.Name != "bot" {
					t.Fatalf("%+v, %v", p, err)
				}
				return
			}
			if !errors.Is(err, tt.want) {
				t.Fatalf("err %v, want %v", err, tt.want)
			}
		})
	}
	if _, err := auth.New(auth.Config{}); err == nil {
		t.Fatal("an authenticator without credentials was made")
	}
}
