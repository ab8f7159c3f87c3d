package eventstore

import (
	"hash/maphash"

	"github.com/factum-go/factum"
)

// memoryAggregate is one aggregate in the memory store: its tenant, its
// streams in version order and an index of its request IDs. It is guarded
// by its shard's lock.
type memoryAggregate struct {
	tenant  string
	streams []*factum.EventStream // streams[v-1] is version v
	// requests maps the 64-bit hash of a request ID to the version of its
	// stream; the stream's RequestID confirms a hit. A map of integers is
	// cheaper to probe and grow than one of strings, and holds no pointers
	// for the collector to scan.
	requests map[uint64]int32
	// collided holds the request IDs whose hash another request ID of the
	// aggregate already had: practically never used, but it keeps the
	// index exact.
	collided map[string]int32
}

// requestVersion returns the version of the aggregate's stream with the
// request ID, or 0. h is the request ID's hash.
func (a *memoryAggregate) requestVersion(h uint64, requestID string) int {
	v := a.requests[h]
	if v == 0 {
		return 0 // collided entries exist only under hashes taken here
	}
	if a.streams[v-1].RequestID == requestID {
		return int(v)
	}
	return int(a.collided[requestID])
}

// addRequest records the request ID of version v, which must be new to
// the aggregate.
func (a *memoryAggregate) addRequest(h uint64, requestID string, v int) {
	if _, taken := a.requests[h]; taken {
		if a.collided == nil {
			a.collided = make(map[string]int32)
		}
		a.collided[requestID] = int32(v)
		return
	}
	a.requests[h] = int32(v)
}

// requestHash hashes a request ID with the store's seed.
func (m *memoryBackend) requestHash(requestID string) uint64 {
	return maphash.String(m.seed, requestID)
}
