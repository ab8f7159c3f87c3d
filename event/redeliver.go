package event

import (
	"context"
	"runtime/debug"
	"time"

	"github.com/factum-go/factum"
)

// Redeliver hands s once to the consumer's function fn through the chain a
// live delivery runs (Config.Middleware, the processor's, the function's,
// then Timeout and Recover), so that the engine's middleware (tracing,
// metrics) sees a compensation's retry as it sees a delivery; Retry makes
// one attempt, the caller being the one that retries. timeout, when
// positive, bounds the call besides HandlerTimeout. The chain, as a live
// delivery's, runs with s's tenant in its context. It reports whether fn
// is one of the consumer's functions (false: nothing was called).
func (c *Consumer) Redeliver(ctx context.Context, fn factum.Function, s *factum.EventStream, timeout time.Duration) (bool, error) {
	for i, h := range c.proc.handlers {
		if h.Function != fn {
			continue
		}
		if timeout > 0 {
			var cancel context.CancelFunc
			ctx, cancel = context.WithTimeout(ctx, timeout)
			defer cancel()
		}
		ctx = factum.ContextWithTenant(ctx, s.AggregateID.TenantOrDefault())
		return true, c.funcs[i](context.WithValue(ctx, resultKey{}, &results{once: true}), s)
	}
	return false, nil
}

// Invoke calls h once for s under timeout, with s's tenant in its context
// (factum.ContextWithTenant), turning a panic into an
// InternalServerError. The compensation scheduler uses it to re-deliver a
// stream to one function.
func Invoke(ctx context.Context, h *Handler, s *factum.EventStream, timeout time.Duration) error {
	ctx = factum.ContextWithTenant(ctx, s.AggregateID.TenantOrDefault())
	if timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, timeout)
		defer cancel()
	}
	return invoke(ctx, h, s)
}

// invoke calls h once for s, turning a panic into an InternalServerError.
func invoke(ctx context.Context, h *Handler, s *factum.EventStream) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = factum.Errorf(factum.CodeInternalServerError, "event function %s panicked: %v\n%s", h.Function, r, debug.Stack())
		}
	}()
	return h.Handle(ctx, s)
}
