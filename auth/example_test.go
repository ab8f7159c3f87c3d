package auth_test

import (
	"errors"
	"fmt"
	"net/http"

	"github.com/factum-go/factum/auth"
)

func Example() {
	// The key file stores hashes only; the caller holds the key.
	key := "fk_example-key-not-for-production-use"
	keys, err := auth.ParseKeys("ci-bot " + auth.HashKey(key) + " tenants=acme roles=send,read")
	if err != nil {
		panic(err)
	}
	a, err := auth.New(auth.Config{Keys: keys})
	if err != nil {
		panic(err)
	}
	r, _ := http.NewRequest("GET", "/tenant/acme/cart/c-1/state", nil)
	r.Header.Set(auth.HeaderAPIKey, key)
	p, err := a.Authenticate(r.Context(), r)
	if err != nil {
		panic(err)
	}
	fmt.Println(p.Name, p.Tenants, p.Roles)
	fmt.Println(auth.Authorize(p, "acme", auth.RoleRead))
	fmt.Println(errors.Is(auth.Authorize(p, "acme", auth.RoleOperator), auth.ErrRoleMissing))
	fmt.Println(errors.Is(auth.Authorize(p, "globex", auth.RoleRead), auth.ErrTenantNotHeld))
	// Output:
	// ci-bot [acme] [send read]
	// <nil>
	// true
	// true
}
