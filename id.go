package factum

import (
	"fmt"

	"github.com/google/uuid"

	"github.com/factum-go/factum/internal/uuidv7"
)

// Limits on identities. Values beyond them are refused with IllegalArgument
// before anything is stored, so every backend can index them.
const (
	// MaxNameLen bounds context, aggregate, command and event names.
	MaxNameLen = 64
	// MaxIDLen bounds aggregate IDs, command IDs and request IDs.
	MaxIDLen = 128
	// MaxTenantLen bounds tenant IDs.
	MaxTenantLen = 64
)

// DefaultTenant is the tenant of aggregates created without one.
const DefaultTenant = "default"

// NamedAggregate names an aggregate type inside a bounded context.
type NamedAggregate struct {
	// Context is the bounded context, such as "shop".
	Context string `json:"context"`
	// Aggregate is the aggregate type name, such as "cart".
	Aggregate string `json:"aggregate"`
}

// String formats the name as "context.aggregate".
func (n NamedAggregate) String() string { return n.Context + "." + n.Aggregate }

// Validate reports an IllegalArgument error if either part is not a valid name.
func (n NamedAggregate) Validate() error {
	if err := ValidateName("context", n.Context); err != nil {
		return err
	}
	return ValidateName("aggregate", n.Aggregate)
}

// WithID returns the identity of one aggregate of this type in the default
// tenant.
func (n NamedAggregate) WithID(id string) AggregateID {
	return AggregateID{NamedAggregate: n, ID: id, Tenant: DefaultTenant}
}

// AggregateID identifies one aggregate instance. A stream's identity is
// (Context, Aggregate, ID): IDs are unique per aggregate type across tenants.
// The tenant is fixed when the aggregate is created; naming another tenant
// for an existing aggregate is refused with TenantMismatch.
type AggregateID struct {
	NamedAggregate
	// ID is the aggregate instance ID.
	ID string `json:"id"`
	// Tenant owns the aggregate; empty means DefaultTenant.
	Tenant string `json:"tenant"`
}

// String formats the identity as "context.aggregate/id@tenant".
func (a AggregateID) String() string {
	return a.NamedAggregate.String() + "/" + a.ID + "@" + a.TenantOrDefault()
}

// TenantOrDefault returns the tenant, or DefaultTenant when it is empty.
func (a AggregateID) TenantOrDefault() string {
	if a.Tenant == "" {
		return DefaultTenant
	}
	return a.Tenant
}

// WithTenant returns a copy of a owned by tenant.
func (a AggregateID) WithTenant(tenant string) AggregateID {
	a.Tenant = tenant
	return a
}

// Validate reports an IllegalArgument error for an empty or oversized part or
// one holding characters that cannot travel in a URL path segment. An empty
// tenant is valid and means DefaultTenant.
func (a AggregateID) Validate() error {
	if err := a.NamedAggregate.Validate(); err != nil {
		return err
	}
	if err := ValidateID("aggregate id", a.ID); err != nil {
		return err
	}
	if a.Tenant != "" {
		if len(a.Tenant) > MaxTenantLen {
			return IllegalArgument(fmt.Sprintf("tenant is longer than %d bytes", MaxTenantLen))
		}
		if err := ValidateID("tenant", a.Tenant); err != nil {
			return err
		}
	}
	return nil
}

// ValidateName checks a context, aggregate, command or event name: 1 to
// MaxNameLen bytes of ASCII letters, digits, '_', '-' and '.', starting with
// a letter. what names the field in the error.
func ValidateName(what, name string) error {
	if name == "" {
		return IllegalArgument(what + " name is empty")
	}
	if len(name) > MaxNameLen {
		return IllegalArgument(fmt.Sprintf("%s name %.20q... is longer than %d bytes", what, name, MaxNameLen))
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z':
		case i > 0 && (c >= '0' && c <= '9' || c == '_' || c == '-' || c == '.'):
		default:
			return IllegalArgument(fmt.Sprintf("%s name %q: character %q at %d is not allowed (letters, digits, '_', '-', '.'; first a letter)", what, name, c, i))
		}
	}
	return nil
}

// ValidateID checks an aggregate, command or request ID or a tenant: 1 to
// MaxIDLen bytes of printable ASCII other than space, '/', '?', '#' and '%',
// so that it can stand in a URL path segment unescaped. what names the
// field in the error.
func ValidateID(what, id string) error {
	if id == "" {
		return IllegalArgument(what + " is empty")
	}
	if len(id) > MaxIDLen {
		return IllegalArgument(fmt.Sprintf("%s %.20q... is longer than %d bytes", what, id, MaxIDLen))
	}
	for i := 0; i < len(id); i++ {
		if !idByte[id[i]] {
			return IllegalArgument(fmt.Sprintf("%s %q: character %q at %d is not allowed", what, id, id[i], i))
		}
	}
	return nil
}

// idByte tells the bytes an ID may hold: one load per byte where the rule
// takes six comparisons, on a path that checks several IDs per command.
var idByte = func() (t [256]bool) {
	for c := '!'; c < 0x7f; c++ {
		t[c] = c != '/' && c != '?' && c != '#' && c != '%'
	}
	return t
}()

// NewID returns a new UUIDv7 string: unique, and ordered by creation time
// among the IDs NewID returns in this process. Its IDs are unique across
// processes with the odds of any UUIDv7 (62 random bits per millisecond and
// counter value).
func NewID() string { return ids.New() }

// ids is the generator behind NewID and NewCommand.
var ids = uuidv7.NewGenerator()

// idNamespace scopes DeriveID's name-based UUIDs to factum.
var idNamespace = uuid.MustParse("6f1c0a5e-4d0b-5a3e-9b1e-6661637475d0")

// DeriveID returns a deterministic UUIDv5 from the given parts: the same
// parts always give the same ID. It keys IDs that must survive a retry, such
// as the aggregate ID of a create command sent without one (derived from its
// request ID) or a saga's command request IDs (derived from the event ID).
func DeriveID(parts ...string) string {
	n := 0
	for _, p := range parts {
		n += len(p) + 1
	}
	b := make([]byte, 0, n)
	for _, p := range parts {
		b = append(b, p...)
		b = append(b, 0)
	}
	return uuid.NewSHA1(idNamespace, b).String()
}
