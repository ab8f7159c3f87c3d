package projection

import (
	"context"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/event"
)

// txKey carries a stream's transaction through the event middleware to
// the projection's function.
type txKey struct{}

// withMiddleware returns p's function wrapped in mw, the first outermost,
// as the event function p.Function() at the PROJECTED stage: the
// middleware (tracing, metrics) sees each stream the runner projects and
// the function's error. The function runs with its stream's tenant in its
// context (Runner.invoke puts it there) whatever the middleware did with
// it. Without middleware it is p's function itself.
func withMiddleware(p *Projection, mw []event.Middleware) Func {
	if len(mw) == 0 {
		return p.project
	}
	h := &event.Handler{Function: p.Function(), Stage: factum.StageProjected, Events: p.consumes.Events, Aggregates: p.consumes.Aggregates}
	next := event.StreamFunc(func(ctx context.Context, s *factum.EventStream) error {
		tx, _ := ctx.Value(txKey{}).(Tx)
		return p.project(factum.ContextWithTenant(ctx, s.AggregateID.TenantOrDefault()), tx, s)
	})
	for i := len(mw) - 1; i >= 0; i-- {
		next = mw[i](h, next)
	}
	return func(ctx context.Context, tx Tx, s *factum.EventStream) error {
		return next(context.WithValue(ctx, txKey{}, tx), s)
	}
}
