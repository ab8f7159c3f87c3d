package telemetry

import (
	"context"
	"time"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/aggregate"
	"github.com/factum-go/factum/command"
	"github.com/prometheus/client_golang/prometheus"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
)

// Attribute keys of factum's own span attributes.
const (
	AttrCommandID        = attribute.Key("factum.command.id")
	AttrCommandName      = attribute.Key("factum.command.name")
	AttrRequestID        = attribute.Key("factum.request.id")
	AttrAggregate        = attribute.Key("factum.aggregate.type")
	AttrAggregateID      = attribute.Key("factum.aggregate.id")
	AttrAggregateVersion = attribute.Key("factum.aggregate.version")
	AttrTenant           = attribute.Key("factum.tenant")
	AttrStage            = attribute.Key("factum.stage")
	AttrCode             = attribute.Key("factum.code")
	AttrFunction         = attribute.Key("factum.function")
	AttrRetries          = attribute.Key("factum.retries")
	AttrEvents           = attribute.Key("factum.events")
	AttrAttempt          = attribute.Key("factum.attempt")
)

// Span options and attributes made once. The options are slices passed
// on with "...": a variadic argument to the tracer's interface method is
// otherwise a slice allocated per span.
var (
	consumerKind    = []trace.SpanStartOption{trace.WithSpanKind(trace.SpanKindConsumer)}
	producerKind    = []trace.SpanStartOption{trace.WithSpanKind(trace.SpanKindProducer)}
	clientKind      = []trace.SpanStartOption{trace.WithSpanKind(trace.SpanKindClient)}
	internalKind    = []trace.SpanStartOption{trace.WithSpanKind(trace.SpanKindInternal)}
	messagingSystem = attribute.String("messaging.system", "factum")
)

// Commands returns the command-pipeline middleware: per command, a span
// continuing the trace in the command's header (with the stage, code and
// version reached, and the steps of the processing as events on it or, at
// SpansDetailed, as child spans), the processing latency by aggregate
// type and code, conflicts by code, retries, and the state cache's hits
// and misses, which the executor reports to the aggregate.CacheObserver
// this middleware puts in the command's context. The span's context is
// written into the header the processor copies to the stream, so the
// event functions that handle the stream continue from it.
func (t *Telemetry) Commands() aggregate.Middleware {
	return func(named factum.NamedAggregate, next aggregate.CommandFunc) aggregate.CommandFunc {
		names := t.names(named)
		agg := named.String()
		// The series of the common outcome are looked up once.
		var okSeconds prometheus.Observer
		var hits, misses, retries prometheus.Counter
		if t.m != nil {
			retries = t.m.retries.WithLabelValues(agg)
			okSeconds = t.m.processSeconds.WithLabelValues(agg, string(factum.CodeOk))
			hits = t.m.cacheLookups.WithLabelValues(agg, "hit")
			misses = t.m.cacheLookups.WithLabelValues(agg, "miss")
		}
		return func(ctx context.Context, cmd *factum.Command) factum.Signal {
			var start time.Duration
			if t.m != nil {
				start = t.clock()
				t.m.processing.Add(1)
			}
			var span trace.Span
			if t.tracing {
				ctx = t.Extract(ctx, cmd.Header)
			}
			var obs *cmdObs
			if t.traces(ctx) {
				ctx, span = t.tracer.Start(ctx, names.process, consumerKind...)
				if span.SpanContext().IsValid() {
					// The executor has the observer write this span's
					// context into each stream's header (WriteHeader), so
					// the event functions continue from this span (and
					// record nothing when it is not sampled).
					obs = &cmdObs{header: true}
				}
				if span.IsRecording() {
					obs.span, obs.t, obs.detailed = span, t, t.detailed
				}
			}
			var counts *cmdCounts
			switch {
			case obs != nil:
				obs.names, obs.t = names, t
				obs.ctx.Context, obs.ctx.Observer = ctx, obs
				ctx = &obs.ctx
				counts = &obs.cmdCounts
			case t.m != nil:
				// No span: the counts alone, with no phase calls.
				counts = &cmdCounts{t: t}
				counts.ctx.Context, counts.ctx.Observer = ctx, counts
				ctx = &counts.ctx
			}
			sig := next(ctx, cmd)
			// Attributes are made only for a span that records them, at
			// its end, in one call from a pooled buffer; the ones a
			// command may lack are left out, to stay within maxSpanAttrs.
			if span != nil && span.IsRecording() {
				b := getAttrs()
				kv := append(b.kv[:0],
					names.agg,
					AttrAggregateID.String(cmd.AggregateID.ID),
					AttrCommandID.String(cmd.ID),
					AttrCommandName.String(cmd.Name),
					AttrStage.String(sig.Stage.String()), AttrCode.String(string(sig.Code)), AttrAggregateVersion.Int(sig.AggregateVersion),
				)
				if cmd.RequestID != "" && cmd.RequestID != cmd.ID { // by default the request ID is the command's
					kv = append(kv, AttrRequestID.String(cmd.RequestID))
				}
				if cmd.AggregateID.Tenant != "" {
					kv = append(kv, AttrTenant.String(cmd.AggregateID.Tenant))
				}
				if n := counts.appends.Load(); n > 1 {
					kv = append(kv, AttrRetries.Int(int(n-1)))
				}
				span.SetAttributes(kv...)
				putAttrs(b)
				if sig.Code != factum.CodeOk {
					span.SetStatus(codes.Error, string(sig.Code)+": "+sig.Message)
				}
			}
			if span != nil {
				span.End()
			}
			if t.m != nil {
				t.m.processing.Add(-1)
				if sig.Code == factum.CodeOk {
					// A command that appended ends with its append; one
					// that did not (nothing to append, or a duplicate
					// answered with the earlier outcome) ends now.
					end := time.Duration(counts.appended.Load())
					if end == 0 {
						end = t.clock()
					}
					okSeconds.Observe((end - start).Seconds())
				} else {
					code := codeLabel(sig.Code)
					t.m.processSeconds.WithLabelValues(agg, code).Observe(t.since(start))
					if conflict(sig.Code) {
						t.m.conflicts.WithLabelValues(agg, code).Inc()
					}
				}
				if n := counts.appends.Load(); n > 1 {
					retries.Add(float64(n - 1))
				}
				if n := counts.hits.Load(); n > 0 {
					hits.Add(float64(n))
				}
				if n := counts.misses.Load(); n > 0 {
					misses.Add(float64(n))
				}
			}
			return sig
		}
	}
}

// Bus returns next instrumented: the sender's trace context (an HTTP
// request's span, a saga's event function's) written into the command's
// header before the bus carries it, so that the processor continues the
// sender's trace, and a count of sends by outcome. At the per-command
// level the send is a factum.send event on the sender's span; at the
// detailed level it is a producer span of its own, a child of the
// sender's, whose context the header carries. The command is copied,
// never changed.
func (t *Telemetry) Bus(next command.Bus) command.Bus {
	return &bus{t: t, next: next}
}

type bus struct {
	t    *Telemetry
	next command.Bus
}

// Send implements command.Bus.
func (b *bus) Send(ctx context.Context, cmd *factum.Command) error {
	t := b.t
	if t.detailed && t.traces(ctx) {
		return b.sendSpan(ctx, cmd)
	}
	if t.tracing {
		if caller := trace.SpanFromContext(ctx); caller.SpanContext().IsValid() {
			// The caller's decision travels, recorded or not.
			if caller.IsRecording() {
				a := getAttrs()
				caller.AddEvent("factum.send", trace.WithAttributes(append(a.kv[:0],
					t.names(cmd.AggregateID.NamedAggregate).agg, AttrCommandID.String(cmd.ID), AttrCommandName.String(cmd.Name))...))
				putAttrs(a)
			}
			c := *cmd
			c.Header = t.Inject(ctx, cmd.Header)
			cmd = &c
		}
	}
	err := b.next.Send(ctx, cmd)
	t.countSend(err)
	return err
}

// sendSpan sends cmd under a producer span of its own (SpansDetailed).
func (b *bus) sendSpan(ctx context.Context, cmd *factum.Command) error {
	t := b.t
	names := t.names(cmd.AggregateID.NamedAggregate)
	ctx, span := t.tracer.Start(ctx, names.send, producerKind...)
	defer span.End()
	if span.IsRecording() {
		a := getAttrs()
		span.SetAttributes(append(a.kv[:0], names.agg, AttrCommandID.String(cmd.ID), AttrCommandName.String(cmd.Name))...)
		putAttrs(a)
	}
	if span.SpanContext().IsValid() {
		// An unsampled trace travels too: the processor then records
		// nothing, where it would otherwise sample a trace of its own.
		c := *cmd
		c.Header = t.Inject(ctx, cmd.Header)
		cmd = &c
	}
	err := b.next.Send(ctx, cmd)
	if err != nil {
		span.RecordError(err)
		span.SetStatus(codes.Error, errLabel(err))
	}
	t.countSend(err)
	return err
}

func (t *Telemetry) countSend(err error) {
	switch {
	case t.m == nil:
	case err == nil:
		t.m.sendsOk.Inc()
	default:
		t.m.sends.WithLabelValues(errLabel(err)).Inc()
	}
}
