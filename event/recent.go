package event

import (
	"sync"

	"github.com/factum-go/factum"
)

// recentFailuresSize bounds how many failures a consumer remembers for
// FailureOn.
const recentFailuresSize = 4096

type failureKey struct {
	stream string
	fn     factum.Function
}

// recentFailures remembers the last failures a consumer saw, oldest
// forgotten first: enough for a retried request that waits for a branch
// stage to learn that its first attempt's stream failed at a function.
type recentFailures struct {
	mu    sync.Mutex
	m     map[failureKey]error
	order []failureKey // ring of the keys in m, oldest at next
	next  int
}

func (r *recentFailures) add(stream string, fn factum.Function, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.m == nil {
		r.m = make(map[failureKey]error)
	}
	k := failureKey{stream, fn}
	if _, ok := r.m[k]; ok {
		r.m[k] = err
		return
	}
	if len(r.order) < recentFailuresSize {
		r.order = append(r.order, k)
	} else {
		delete(r.m, r.order[r.next])
		r.order[r.next] = k
		r.next = (r.next + 1) % recentFailuresSize
	}
	r.m[k] = err
}

func (r *recentFailures) get(stream string, fn factum.Function) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.m[failureKey{stream, fn}]
}

// FailureOn returns the error fn failed with on the stream with the ID, if
// this consumer saw it fail there recently (the last 4096 failures since
// it started), and nil otherwise. A failure it returns was recorded by the
// Failures recorder, if one is set, before the consumer moved on.
func (c *Consumer) FailureOn(streamID string, fn factum.Function) error {
	return c.recent.get(streamID, fn)
}
