package eventstore

import (
	"testing"

	"github.com/factum-go/factum"
)

// Two request IDs of one aggregate whose hashes collide are both found,
// each with its own version, and a third with the same hash is not.
func TestMemoryRequestIndexCollision(t *testing.T) {
	a := &memoryAggregate{requests: map[uint64]int32{}}
	const h = 42
	for v, req := range []string{"req-a", "req-b", "req-c"} {
		a.streams = append(a.streams, &factum.EventStream{Version: v + 1, RequestID: req})
		a.addRequest(h, req, v+1)
	}
	for v, req := range []string{"req-a", "req-b", "req-c"} {
		if got := a.requestVersion(h, req); got != v+1 {
			t.Errorf("%s: version %d, want %d", req, got, v+1)
		}
	}
	if got := a.requestVersion(h, "req-d"); got != 0 {
		t.Errorf("an unknown request with a colliding hash found version %d", got)
	}
	if got := a.requestVersion(h+1, "req-a"); got != 0 {
		t.Errorf("a hash with no entry found version %d", got)
	}
}
