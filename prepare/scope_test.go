package prepare_test

import (
	"context"
	"strings"
	"testing"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/prepare"
)

// A PerTenant key reserves one name per tenant: tenants neither see nor
// take, move or release each other's reservations. A shared key (the
// default) stays global.
func TestPerTenantKeys(t *testing.T) {
	backend := prepare.NewMemory(prepare.MemoryConfig{})
	perTenant, err := prepare.NewKey[string]("username", backend, prepare.PerTenant())
	if err != nil {
		t.Fatal(err)
	}
	shared, err := prepare.NewKey[string]("sku", backend)
	if err != nil {
		t.Fatal(err)
	}
	acme := factum.ContextWithTenant(context.Background(), "acme")
	evil := factum.ContextWithTenant(context.Background(), "evil")
	none := context.Background()
	mustBool := func(what string, got bool, err error, want bool) {
		t.Helper()
		if err != nil || got != want {
			t.Fatalf("%s = %v, %v; want %v", what, got, err, want)
		}
	}

	ok, err := perTenant.Prepare(acme, "alice", prepare.Forever("u-acme"))
	mustBool("acme prepares alice", ok, err, true)
	_, found, err := perTenant.Get(evil, "alice")
	mustBool("evil sees acme's alice", found, err, false)
	ok, err = perTenant.Rollback(evil, "alice")
	mustBool("evil releases acme's alice", ok, err, false)
	ok, err = perTenant.RollbackValue(evil, "alice", "u-acme")
	mustBool("evil releases acme's alice by value", ok, err, false)
	ok, err = perTenant.Reprepare(evil, "alice", "u-acme", prepare.Forever("u-evil"))
	mustBool("evil reprepares acme's alice", ok, err, false)
	if _, err := perTenant.ChangeKey(evil, "alice", "u-acme", "alicia", prepare.Forever("u-acme")); factum.CodeOf(err) != factum.CodeIllegalState {
		t.Fatalf("evil moves acme's alice: %v, want IllegalState (not held)", err)
	}
	ok, err = perTenant.Prepare(evil, "alice", prepare.Forever("u-evil"))
	mustBool("evil prepares its own alice", ok, err, true)
	ok, err = perTenant.Prepare(evil, "alice", prepare.Forever("u-evil-2"))
	mustBool("evil prepares alice twice", ok, err, false)
	// The default tenant is a tenant of its own.
	ok, err = perTenant.Prepare(none, "alice", prepare.Forever("u-default"))
	mustBool("default tenant prepares alice", ok, err, true)
	for ctx, want := range map[context.Context]string{acme: "u-acme", evil: "u-evil", none: "u-default"} {
		pv, found, err := perTenant.Get(ctx, "alice")
		if err != nil || !found || pv.Value != want {
			t.Fatalf("alice = %+v %v %v, want %s", pv, found, err, want)
		}
	}
	ok, err = perTenant.ChangeKey(acme, "alice", "u-acme", "alicia", prepare.Forever("u-acme"))
	mustBool("acme renames alice", ok, err, true)
	if pv, found, _ := perTenant.Get(evil, "alice"); !found || pv.Value != "u-evil" {
		t.Fatalf("acme's rename touched evil's alice: %+v %v", pv, found)
	}

	// A shared key is one namespace for everyone.
	ok, err = shared.Prepare(acme, "sku-1", prepare.Forever("acme"))
	mustBool("acme prepares sku-1", ok, err, true)
	ok, err = shared.Prepare(evil, "sku-1", prepare.Forever("evil"))
	mustBool("evil prepares shared sku-1", ok, err, false)

	// The tenant takes part of the length limit.
	long := strings.Repeat("k", prepare.MaxKeyLen-len("acme/"))
	ok, err = perTenant.Prepare(acme, long, prepare.Forever("x"))
	mustBool("acme prepares the longest key", ok, err, true)
	if _, err := perTenant.Prepare(acme, long+"k", prepare.Forever("x")); factum.CodeOf(err) != factum.CodeIllegalArgument {
		t.Fatalf("a key over the limit in its tenant: %v", err)
	}
}
