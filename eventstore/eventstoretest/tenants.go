package eventstoretest

import (
	"context"
	"strings"
	"testing"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/eventstore"
	"github.com/factum-go/factum/internal/kit"
)

// testTenantSealed checks that a request ID one tenant used tells another
// tenant nothing: the append naming it from the other tenant is a
// TenantMismatch (never a DuplicateRequestId, which would confirm the
// request), and Lookup and RequestExists answer as for a request that was
// never made. No error reaching the other tenant carries the owner's
// tenant, versions, command IDs or event names.
func testTenantSealed(t *testing.T, st eventstore.Store) {
	f := newFixture(t)
	ctx := context.Background()
	owner := f.ID("sealed").WithTenant("tenant-owner")
	s1 := stream(owner, 1, "req-shared", 1)
	s1.Events[0].Name = "owner_secret_happened"
	mustAppend(t, st, s1)
	mustAppend(t, st, stream(owner, 2, "req-two", 1))
	intruder := owner.WithTenant("tenant-intruder")

	// leaks fails if err carries anything of the owner's; own is the
	// version the intruder itself named.
	leaks := func(t *testing.T, err error, own int) {
		t.Helper()
		fe := factum.AsError(err)
		text := err.Error() + " " + fe.Message + " " + fe.Aggregate.Tenant + " " + fe.CommandID
		for _, secret := range []string{"tenant-owner", s1.CommandID, "owner_secret_happened"} {
			if strings.Contains(text, secret) {
				t.Fatalf("error to another tenant reveals %q: %v (%+v)", secret, err, fe)
			}
		}
		if fe.Version != own {
			t.Fatalf("error to another tenant carries version %d", fe.Version)
		}
	}

	appends := []struct {
		name    string
		version int
		request string
	}{
		{"reused request at the next version", 3, "req-shared"},
		{"reused request at a taken version", 2, "req-shared"},
		{"reused request as a create", 1, "req-shared"},
		{"new request", 3, "req-new"},
	}
	for _, a := range appends {
		t.Run(a.name, func(t *testing.T) {
			bad := stream(intruder, a.version, a.request, 1)
			err := st.Append(ctx, bad)
			fe := kit.WantCode(t, err, factum.CodeTenantMismatch)
			if fe.Aggregate.TenantOrDefault() != "tenant-intruder" || fe.Version != a.version || fe.CommandID != bad.CommandID {
				t.Fatalf("error identities %+v are not the intruder's own", fe)
			}
			leaks(t, err, a.version)
		})
	}
	if got := load(t, st, owner); len(got) != 2 {
		t.Fatalf("owner has %d streams after the intruder's appends, want 2", len(got))
	}

	for _, req := range []string{"req-shared", "req-two", "req-never"} {
		ok, err := st.RequestExists(ctx, intruder, req)
		if err != nil {
			t.Fatal(err)
		}
		if ok {
			t.Fatalf("RequestExists(%s) = true from another tenant", req)
		}
		_, err = st.Lookup(ctx, intruder, req)
		fe := kit.WantCode(t, err, factum.CodeNotFound)
		if fe.Aggregate != intruder || fe.RequestID != req {
			t.Fatalf("not-found error names %v / %q, want the intruder's own identities", fe.Aggregate, fe.RequestID)
		}
		leaks(t, err, 0)
	}
	// The default tenant is a tenant like any other.
	if _, err := st.Lookup(ctx, owner.WithTenant(""), "req-shared"); factum.CodeOf(err) != factum.CodeNotFound {
		t.Fatalf("lookup from the default tenant: %v, want NotFound", err)
	}
	// The owner still finds its own request.
	got, err := st.Lookup(ctx, owner, "req-shared")
	if err != nil {
		t.Fatal(err)
	}
	sameStream(t, got, s1)
	if ok, err := st.RequestExists(ctx, owner, "req-shared"); err != nil || !ok {
		t.Fatalf("owner's RequestExists = %v, %v", ok, err)
	}
}
