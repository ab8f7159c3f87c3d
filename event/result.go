package event

import (
	"context"
	"sync"
)

type resultKey struct{}

// results collects what a function returns to the waiting caller, and
// what the consumer learns of the delivery from the middleware.
type results struct {
	mu sync.Mutex
	m  map[string]any
	// attempts is how many attempts Retry made (0: no Retry ran).
	attempts int
	// lane is the consumer lane delivering, for Timeout; nil outside one.
	lane *attemptDeadlines
	// once marks a redelivery (Consumer.Redeliver): Retry makes one
	// attempt, the redeliverer being the one that retries.
	once bool
}

// AddResult attaches key=value to the signal the consumer sends for the
// function running with ctx, so the waiting caller sees it in its result
// (a saga reports the IDs of the commands it sent). Outside a consumer it
// does nothing.
func AddResult(ctx context.Context, key string, value any) {
	r, _ := ctx.Value(resultKey{}).(*results)
	if r == nil {
		return
	}
	r.mu.Lock()
	if r.m == nil {
		r.m = make(map[string]any)
	}
	r.m[key] = value
	r.mu.Unlock()
}

// take returns the results added and empties r for the next function.
func (r *results) take() map[string]any {
	r.mu.Lock()
	defer r.mu.Unlock()
	m := r.m
	r.m = nil
	return m
}
