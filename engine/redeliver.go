package engine

import (
	"context"
	"time"

	"github.com/factum-go/factum"
)

// Redeliver hands s once to the event function fn through the middleware
// chain its consumer runs live deliveries through (Config.EventMiddleware,
// the consumer settings' middleware, the processor's and the function's,
// then the defaults with a single attempt), within timeout when it is
// positive. A compensation's retry uses it, so that tracing and metrics
// see a retried delivery as they see a live one. It reports whether fn is
// a function of one of the engine's consumers (false: nothing ran).
func (r *Engine) Redeliver(ctx context.Context, fn factum.Function, s *factum.EventStream, timeout time.Duration) (bool, error) {
	group := factum.Function{Context: fn.Context, Processor: fn.Processor}
	for _, c := range r.consumers {
		if c.Processor().Name() == group {
			return c.Redeliver(ctx, fn, s, timeout)
		}
	}
	return false, nil
}
