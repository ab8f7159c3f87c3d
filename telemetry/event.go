package telemetry

import (
	"context"
	"time"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/event"
	"github.com/prometheus/client_golang/prometheus"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
)

// Events returns the event-function middleware: per stream handled, a
// span continuing the trace in the stream's header, or, for a retry run
// under a compensation attempt's span, a child of that span (a failure
// marks it with the error), the latency by function, stage and outcome, and the
// failures. The function sees the stream with the span's context in its
// header, so the commands a saga derives from it continue this span.
func (t *Telemetry) Events() event.Middleware {
	return func(h *event.Handler, next event.StreamFunc) event.StreamFunc {
		fn := h.Function.String()
		stage := h.Stage.String()
		spanName := "factum.function " + fn
		fnAttr, stageAttr := AttrFunction.String(fn), AttrStage.String(stage)
		// The function's series are looked up once, not per stream.
		var okSeconds, errSeconds prometheus.Observer
		var failures prometheus.Counter
		if t.m != nil {
			okSeconds = t.m.functionSeconds.WithLabelValues(fn, stage, "ok")
			errSeconds = t.m.functionSeconds.WithLabelValues(fn, stage, "error")
			failures = t.m.functionFailures.WithLabelValues(fn, stage)
		}
		return func(ctx context.Context, s *factum.EventStream) error {
			var start time.Duration
			if t.m != nil {
				start = t.clock()
			}
			var span trace.Span
			if t.tracing && !underAttempt(ctx) {
				// A live delivery continues the stream's trace; a retry
				// under a compensation attempt's span stays under it.
				ctx = t.Extract(ctx, s.Header)
			}
			if t.traces(ctx) {
				ctx, span = t.tracer.Start(ctx, spanName, consumerKind...)
				if span.IsRecording() {
					b := getAttrs()
					span.SetAttributes(append(b.kv[:0],
						fnAttr, stageAttr,
						t.names(s.AggregateID.NamedAggregate).agg,
						AttrAggregateID.String(s.AggregateID.ID),
						AttrAggregateVersion.Int(s.Version),
						AttrCommandID.String(s.CommandID),
						AttrEvents.Int(len(s.Events)),
					)...)
					putAttrs(b)
					c := *s
					c.Header = t.Inject(ctx, s.Header)
					s = &c
				}
			}
			err := next(ctx, s)
			if span != nil {
				if err != nil {
					span.RecordError(err)
					span.SetStatus(codes.Error, err.Error())
				}
				span.End()
			}
			switch {
			case t.m == nil:
			case err == nil:
				okSeconds.Observe(t.since(start))
			default:
				failures.Inc()
				errSeconds.Observe(t.since(start))
			}
			return err
		}
	}
}

// underAttempt reports whether ctx is a compensation attempt's (Compensation)
// with a span of its own.
func underAttempt(ctx context.Context) bool {
	a, _ := ctx.Value(attemptKey{}).(*attempt)
	return a != nil && a.span != nil && a.span.SpanContext().IsValid()
}
