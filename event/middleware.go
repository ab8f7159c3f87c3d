package event

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"time"

	"github.com/factum-go/factum"
)

// Middleware wraps one event function. It is called once per function, at
// engine.New (NewConsumer); h is read-only (its Function and Stage identify
// it). It returns the function that handles the function's streams from
// then on, calling next (or not) for each.
//
// A consumer's chain for one function runs, outermost first: the
// middleware of Config.Middleware (the engine's), those of the processor
// (WithMiddleware), those of the function (WithFunctionMiddleware), then
// the defaults Retry, Timeout and Recover around the function itself,
// which runs with its stream's tenant in its context. A
// middleware therefore sees each delivery of a stream to the function once,
// with its final error, whatever the attempts under it; a panic in the
// function reaches it as an InternalServerError, and a panic in a
// middleware itself is not recovered unless a Recover runs outside it.
type Middleware func(h *Handler, next StreamFunc) StreamFunc

// WithMiddleware adds middleware to every function of the processor,
// inside the consumer's (the engine's) and outside each function's own.
// The first one given is the outermost.
func WithMiddleware(mw ...Middleware) Option {
	return func(p *Processor) error {
		for _, m := range mw {
			if m == nil {
				return factum.IllegalArgument(fmt.Sprintf("processor %s/%s: nil middleware", p.context, p.name))
			}
		}
		p.middleware = append(p.middleware, mw...)
		return nil
	}
}

// WithFunctionMiddleware adds middleware to this function only, inside the
// processor's. The first one given is the outermost. A nil middleware is
// skipped.
func WithFunctionMiddleware(mw ...Middleware) HandlerOption {
	return func(h *Handler) {
		for _, m := range mw {
			if m != nil {
				h.middleware = append(h.middleware, m)
			}
		}
	}
}

// wrap builds h's chain: mw, the first outermost, around h.Handle run
// with its stream's tenant.
func wrap(h *Handler, mw ...[]Middleware) StreamFunc {
	f := withTenant(h.Handle)
	for i := len(mw) - 1; i >= 0; i-- {
		for j := len(mw[i]) - 1; j >= 0; j-- {
			f = mw[i][j](h, f)
		}
	}
	return f
}

// Recover returns the middleware that turns a panic under it into an
// InternalServerError naming the function, which Retry then treats as any
// other failure.
func Recover() Middleware {
	return func(h *Handler, next StreamFunc) StreamFunc {
		fn := h.Function
		return func(ctx context.Context, s *factum.EventStream) (err error) {
			defer func() {
				if r := recover(); r != nil {
					err = factum.Errorf(factum.CodeInternalServerError, "event function %s panicked: %v\n%s", fn, r, debug.Stack())
				}
			}()
			return next(ctx, s)
		}
	}
}

// Retry returns the middleware that tries a failing function up to
// attempts times in all (attempts < 1 means 1), waiting base doubled once
// per attempt made before the next one (at most 5 s). An error
// that says it is not retryable (a Retryable() bool method returning
// false, or a business rejection's code: IllegalArgument, IllegalState,
// BadRequest, NotFound) ends the attempts at once. The consumer records
// the number of attempts made with the failure. A redelivery
// (Consumer.Redeliver) gets one attempt: its caller is the one retrying.
func Retry(attempts int, base time.Duration) Middleware {
	attempts = max(attempts, 1)
	return func(_ *Handler, next StreamFunc) StreamFunc {
		if attempts == 1 {
			return next
		}
		return func(ctx context.Context, s *factum.EventStream) error {
			d, _ := ctx.Value(resultKey{}).(*results)
			for attempt := 1; ; attempt++ {
				err := next(ctx, s)
				if d != nil {
					d.attempts = attempt
				}
				if err == nil || attempt >= attempts || !retryable(err) || d != nil && d.once {
					return err
				}
				sleep(ctx, backoff(base, attempt))
			}
		}
	}
}

// retryable reports whether trying a failed function again in place may
// help: as the error says, if it has a Retryable() bool method (a saga's
// refused command says no); otherwise not for business rejections.
func retryable(err error) bool {
	var r interface{ Retryable() bool }
	if errors.As(err, &r) {
		return r.Retryable()
	}
	switch factum.CodeOf(err) {
	case factum.CodeIllegalArgument, factum.CodeIllegalState, factum.CodeBadRequest, factum.CodeNotFound:
		return false
	}
	return true
}

// Timeout returns the middleware that bounds each call under it to d (no
// bound when d <= 0). Under a consumer, consecutive calls share one
// deadline context as long as it is at least d less 1/64 of d away (see
// attemptDeadlines), also when a middleware outside has added values to
// the context (a trace span, say); a context with a cancellation of its
// own costs a timer per call instead. The function must not use its
// context after it returned.
func Timeout(d time.Duration) Middleware {
	return func(_ *Handler, next StreamFunc) StreamFunc {
		if d <= 0 {
			return next
		}
		return func(ctx context.Context, s *factum.EventStream) error {
			if r, _ := ctx.Value(resultKey{}).(*results); r != nil && r.lane != nil {
				if ctx == r.lane.cur.outer {
					return next(r.lane.bounded(d), s)
				}
				if ctx.Done() == nil {
					return next(&boundedCtx{Context: ctx, limit: r.lane.get(d)}, s)
				}
			}
			ctx, cancel := context.WithTimeout(ctx, d)
			defer cancel()
			return next(ctx, s)
		}
	}
}

// boundedCtx is a context that is never cancelled (its Done is nil)
// bounded by the lane's shared deadline context: the values are the
// context's, the deadline and the end are limit's.
type boundedCtx struct {
	context.Context
	limit context.Context
}

// Deadline returns limit's.
func (c *boundedCtx) Deadline() (time.Time, bool) { return c.limit.Deadline() }

// Done returns limit's.
func (c *boundedCtx) Done() <-chan struct{} { return c.limit.Done() }

// Err returns limit's.
func (c *boundedCtx) Err() error { return c.limit.Err() }

// AfterFunc runs f when limit ends, so that a context derived from c is
// cancelled with it without a goroutine watching (context.WithCancel uses
// it).
func (c *boundedCtx) AfterFunc(f func()) func() bool { return context.AfterFunc(c.limit, f) }
