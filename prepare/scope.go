package prepare

import (
	"context"
	"fmt"

	"github.com/factum-go/factum"
)

// KeyOption configures a Key (see PerTenant).
type KeyOption func(*keyOptions)

type keyOptions struct {
	perTenant bool
}

// PerTenant scopes the Key's application keys by tenant: the same key
// (a username, say) reserved in one tenant is free in every other, and no
// operation of one tenant can see, take, move or release another tenant's
// reservation. The tenant is the one of the context each call gets
// (factum.TenantFromContext; command handlers' contexts carry their
// command's tenant), and factum.DefaultTenant when there is none.
//
// The backend stores the key as tenant + "/" + key (tenants hold no '/',
// so no two scoped keys collide), which leaves the application key at
// most MaxKeyLen - len(tenant) - 1 bytes. Without PerTenant a Key's keys
// are shared by all tenants: right for values that must be unique
// globally, and a way to probe other tenants' data otherwise.
func PerTenant() KeyOption {
	return func(o *keyOptions) { o.perTenant = true }
}

// PerTenant reports whether the Key scopes its keys by tenant.
func (k *Key[V]) PerTenant() bool { return k.perTenant }

// stored checks the context and validates the application key, and
// returns the key the backend stores it under: key itself, or, for a
// PerTenant Key, key in the context's tenant. Every operation of a Key
// starts here, so a backend is never called with a done context or an
// invalid key.
func (k *Key[V]) stored(ctx context.Context, key string) (string, error) {
	if err := ctx.Err(); err != nil {
		return "", err
	}
	if err := ValidateKey(key); err != nil {
		return "", err
	}
	if !k.perTenant {
		return key, nil
	}
	tenant, ok := factum.TenantFromContext(ctx)
	if !ok || tenant == "" {
		tenant = factum.DefaultTenant
	}
	if err := factum.ValidateID("tenant", tenant); err != nil {
		return "", err
	}
	scoped := tenant + "/" + key
	if len(scoped) > MaxKeyLen {
		return "", factum.IllegalArgument(fmt.Sprintf(
			"prepare %s: key %.20q... is longer than %d bytes in tenant %q", k.name, key, MaxKeyLen-len(tenant)-1, tenant))
	}
	return scoped, nil
}
