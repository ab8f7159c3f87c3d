package command

import (
	"crypto/hmac"
	"crypto/sha256"
	"errors"
	"hash"
	"sync"

	"github.com/factum-go/factum"
	"github.com/google/uuid"
)

// MinIDKeyLen is the shortest GatewayConfig.IDKey accepted, in bytes: the
// size of an HMAC-SHA256 output, below which the key is easier to guess
// than the MAC.
const MinIDKeyLen = 32

// ErrIDKeyTooShort is the cause of the IllegalArgument error NewGateway
// returns for an IDKey shorter than MinIDKeyLen.
var ErrIDKeyTooShort = errors.New("ID key too short")

// CreateID returns the aggregate ID a gateway without an ID key
// (GatewayConfig.IDKey) gives a create command sent without one: a UUIDv5
// of the aggregate type, the tenant and the request ID. A retried create
// (same tenant, same request ID) finds its first attempt, and the same
// request ID in another tenant names another aggregate. Anyone can compute
// it, though: aggregate IDs are one namespace across tenants, so a tenant
// that knows or guesses another tenant's request ID can take the ID that
// tenant's create will get (which then answers DuplicateAggregateId) or
// learn whether that request was made. A gateway serving several tenants
// sets an IDKey; Gateway.CreateID returns the ID it gives.
func CreateID(named factum.NamedAggregate, tenant, requestID string) string {
	if tenant == "" {
		tenant = factum.DefaultTenant
	}
	return factum.DeriveID(named.Context, named.Aggregate, tenant, requestID)
}

// CreateID returns the aggregate ID g gives a create command sent without
// one. With an IDKey it is an RFC 9562 UUID version 8 holding the first
// 122 bits of an HMAC-SHA256, under the key, of the aggregate type, the
// tenant and the request ID: the same on every gateway with the same key,
// so a retry finds its first attempt on any instance, and not computable
// without the key. Without one it is the package-level CreateID.
func (g *Gateway) CreateID(named factum.NamedAggregate, tenant, requestID string) string {
	if g.idKey == nil {
		return CreateID(named, tenant, requestID)
	}
	if tenant == "" {
		tenant = factum.DefaultTenant
	}
	return g.idKey.createID(named, tenant, requestID)
}

// idKey derives keyed create IDs. A keyed hash.Hash is not safe for
// concurrent use and building one costs a few allocations and the key's
// two pad blocks, so each goroutine borrows a ready one from the pool and
// Resets it, which restores the keyed state without allocating.
type idKey struct {
	pool sync.Pool // of *idMAC
}

// idMAC is a keyed HMAC with the scratch space of one derivation, so a
// derivation allocates only the string it returns.
type idMAC struct {
	h   hash.Hash
	in  []byte
	sum [sha256.Size]byte
}

// idKeyLabel opens every MAC'd message: a key reused by mistake for
// another HMAC-SHA256 use (a JWT secret, say) yields there no MAC of an
// input an attacker chose.
const idKeyLabel = "factum/create-id\x00"

// maxIDScratch bounds the scratch space an idMAC keeps: room for valid
// names and IDs, but not for an oversized request ID that the validation
// after the derivation refuses.
const maxIDScratch = len(idKeyLabel) + 2*factum.MaxNameLen + 2*factum.MaxIDLen + 4

func newIDKey(key []byte) (*idKey, error) {
	if len(key) < MinIDKeyLen {
		return nil, factum.Errorf(factum.CodeIllegalArgument, "gateway: IDKey: %w: %d bytes, want at least %d", ErrIDKeyTooShort, len(key), MinIDKeyLen)
	}
	key = append([]byte(nil), key...) // the caller may clear or reuse its slice
	k := &idKey{}
	k.pool.New = func() any {
		return &idMAC{h: hmac.New(sha256.New, key), in: make([]byte, 0, maxIDScratch)}
	}
	return k, nil
}

// createID MACs the label and the parts, each ended by a NUL byte (which
// no valid name or ID holds, so the encoding is unambiguous), and formats
// the first 16 bytes as a UUIDv8.
func (k *idKey) createID(named factum.NamedAggregate, tenant, requestID string) string {
	m := k.pool.Get().(*idMAC)
	in := append(m.in[:0], idKeyLabel...)
	for _, p := range [...]string{named.Context, named.Aggregate, tenant, requestID} {
		in = append(in, p...)
		in = append(in, 0)
	}
	m.h.Reset()
	m.h.Write(in)
	sum := m.h.Sum(m.sum[:0])
	var u uuid.UUID
	copy(u[:], sum)
	if cap(in) <= maxIDScratch {
		m.in = in
	}
	k.pool.Put(m)
	u[6] = u[6]&0x0f | 0x80 // version 8
	u[8] = u[8]&0x3f | 0x80 // variant RFC 9562
	return u.String()
}
