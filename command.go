package factum

import (
	"maps"
	"reflect"
	"sync"
	"time"
)

// Command is one command message: a request to change one aggregate.
//
// ID identifies this message and its execution chain; wait signals are
// correlated by it. RequestID identifies the caller's business intent: a
// retry of the same intent reuses it, so the event store can refuse a second
// stream for it. RequestID defaults to ID.
type Command struct {
	// ID identifies this message (a UUIDv7 from NewCommand).
	ID string `json:"id"`
	// RequestID identifies the business intent; empty means ID.
	RequestID string `json:"requestId,omitempty"`
	// AggregateID is the target aggregate. A create command may leave ID
	// empty: the command side derives it from the request ID.
	AggregateID AggregateID `json:"aggregateId"`
	// ExpectedVersion, when positive, is the version the aggregate must be
	// at; a mismatch is CommandExpectVersionConflict and is not retried.
	ExpectedVersion int `json:"aggregateVersion,omitempty"`
	// Name is the command type name (snake_case by default).
	Name string `json:"name"`
	// Body is the command value. In process it is the typed Go value;
	// across processes its JSON encoding.
	Body any `json:"body"`
	// Header is carried to every message derived from this command.
	Header map[string]string `json:"header,omitempty"`
	// CreateTime is when the command was made.
	CreateTime time.Time `json:"createTime"`
	// IsCreate marks a command that creates its aggregate.
	IsCreate bool `json:"isCreate,omitempty"`
	// AllowCreate lets a non-create command create a missing aggregate.
	AllowCreate bool `json:"allowCreate,omitempty"`
	// IsVoid marks a fire-and-forget command: only SENT may be awaited.
	IsVoid bool `json:"isVoid,omitempty"`
	// OwnerID is the user on whose behalf the command runs, if any.
	OwnerID string `json:"ownerId,omitempty"`
}

// NewCommand returns a command for the aggregate with a new ID, the request
// ID equal to it, the body's default name (see NameOf) and the current time.
func NewCommand(aggregate AggregateID, body any) Command {
	id := NewID()
	return Command{
		ID:          id,
		RequestID:   id,
		AggregateID: aggregate,
		Name:        NameOf(body),
		Body:        body,
		CreateTime:  time.Now(),
	}
}

// RequestIDOrID returns RequestID, or ID when RequestID is empty.
func (c Command) RequestIDOrID() string {
	if c.RequestID == "" {
		return c.ID
	}
	return c.RequestID
}

// WithRequestID returns a copy of c with the request ID set.
func (c Command) WithRequestID(requestID string) Command {
	c.RequestID = requestID
	return c
}

// WithExpectedVersion returns a copy of c that must find the aggregate at
// version v.
func (c Command) WithExpectedVersion(v int) Command {
	c.ExpectedVersion = v
	return c
}

// WithHeader returns a copy of c with the header key set; c's own header
// map is not modified.
func (c Command) WithHeader(key, value string) Command {
	h := make(map[string]string, len(c.Header)+1)
	maps.Copy(h, c.Header)
	h[key] = value
	c.Header = h
	return c
}

// WithOwner returns a copy of c on behalf of owner.
func (c Command) WithOwner(owner string) Command {
	c.OwnerID = owner
	return c
}

// WithTenant returns a copy of c aimed at the aggregate in tenant.
func (c Command) WithTenant(tenant string) Command {
	c.AggregateID.Tenant = tenant
	return c
}

// Validate checks the identities and names of the message itself (not the
// body): IllegalArgument for an empty or malformed ID, request ID, name or
// aggregate identity. An empty aggregate ID is allowed for create commands.
func (c Command) Validate() error {
	if err := ValidateID("command id", c.ID); err != nil {
		return err
	}
	if c.RequestID != "" {
		if err := ValidateID("request id", c.RequestID); err != nil {
			return err
		}
	}
	if err := ValidateName("command", c.Name); err != nil {
		return err
	}
	if c.ExpectedVersion < 0 {
		return IllegalArgument("expected aggregate version is negative")
	}
	if c.IsCreate && c.AggregateID.ID == "" {
		return c.AggregateID.NamedAggregate.Validate()
	}
	return c.AggregateID.Validate()
}

// NameOf returns the default message name of v's type: the type name in
// snake_case ("CartItemAdded" becomes "cart_item_added"). A value whose type
// has a method MessageName() string names itself. Pointers name their
// element type.
func NameOf(v any) string {
	if n, ok := v.(interface{ MessageName() string }); ok {
		return n.MessageName()
	}
	t := reflect.TypeOf(v)
	if t == nil {
		return ""
	}
	if n, ok := typeNames.Load(t); ok {
		return n.(string)
	}
	n, _ := typeNames.LoadOrStore(t, typeName(t))
	return n.(string)
}

// typeNames memoizes typeName by type. NewCommand names every command
// with it, and deriving the name allocates it anew each time; the name is
// a pure function of the type, so the memo can never be stale, and it
// holds one entry per type a program names messages with: a set its code
// fixes, so the memo stays small.
var typeNames sync.Map // reflect.Type -> string

// typeName is the default name of values of type t: its element type's
// name in snake case for pointers.
func typeName(t reflect.Type) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return SnakeCase(t.Name())
}

// SnakeCase converts a Go identifier to snake_case, keeping initialisms
// together: "HTTPRequestSent" becomes "http_request_sent".
func SnakeCase(s string) string {
	b := make([]byte, 0, len(s)+4)
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 'A' && c <= 'Z' {
			if i > 0 {
				prev := s[i-1]
				nextLower := i+1 < len(s) && s[i+1] >= 'a' && s[i+1] <= 'z'
				if prev >= 'a' && prev <= 'z' || prev >= '0' && prev <= '9' || (prev >= 'A' && prev <= 'Z' && nextLower) {
					b = append(b, '_')
				}
			}
			c += 'a' - 'A'
		}
		b = append(b, c)
	}
	return string(b)
}
