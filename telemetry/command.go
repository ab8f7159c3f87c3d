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
// (and aggregate.RetryObserver) this middleware puts in the command's
// context. The span's context is written into the header the processor
// copies to the stream, so the event functions that handle the stream
// continue from it.
func (t *Telemetry) Commands() aggregate.Middleware {
	return func(named factum.NamedAggregate, next aggregate.CommandFunc) aggregate.CommandFunc {
		c := &commandType{t: t, next: next, names: t.names(named), agg: named.String()}
		if t.m != nil {
			// The series of the common outcome are looked up once.
			c.okSeconds = t.m.processSeconds.WithLabelValues(c.agg, string(factum.CodeOk))
			c.obs = &typeObs{
				hits:    t.m.cacheLookups.WithLabelValues(c.agg, "hit"),
				misses:  t.m.cacheLookups.WithLabelValues(c.agg, "miss"),
				retries: t.m.retries.WithLabelValues(c.agg),
			}
		}
		return c.process
	}
}

// commandType is the Commands middleware of one aggregate type.
type commandType struct {
	t     *Telemetry
	next  aggregate.CommandFunc
	names *typeNames
	agg   string
	// okSeconds and obs are nil when metrics are off.
	okSeconds prometheus.Observer
	obs       *typeObs
}

// process instruments one command: traced when a span is to be started
// for it, measured otherwise.
func (c *commandType) process(ctx context.Context, cmd *factum.Command) factum.Signal {
	t := c.t
	if !t.tracing {
		return c.measured(ctx, cmd)
	}
	ctx = t.Extract(ctx, cmd.Header)
	if !t.traces(ctx) {
		return c.measured(ctx, cmd)
	}
	return c.traced(ctx, cmd)
}

// measured is process for a command no span records: its metrics alone,
// with the type's observer in its context, or nothing when metrics are
// off.
func (c *commandType) measured(ctx context.Context, cmd *factum.Command) factum.Signal {
	if c.obs == nil {
		return c.next(ctx, cmd)
	}
	m := c.t.m
	start := c.t.clock()
	m.processing.Add(1)
	sig := c.next(c.obs.context(ctx), cmd)
	m.processing.Add(-1)
	c.observe(start, sig)
	return sig
}

// traced is process under a span of the command's own.
func (c *commandType) traced(ctx context.Context, cmd *factum.Command) factum.Signal {
	t := c.t
	var start time.Duration
	if c.obs != nil {
		start = t.clock()
		t.m.processing.Add(1)
	}
	ctx, span := t.tracer.Start(ctx, c.names.process, consumerKind...)
	var obs *cmdObs
	switch {
	case span.SpanContext().IsValid():
		// The executor has the observer write this span's context into
		// each stream's header (StreamHeader), so the event functions
		// continue from this span (and record nothing when it is not
		// sampled).
		obs = &cmdObs{typ: c}
		if span.IsRecording() {
			obs.span = span
		}
		obs.ctx.Context, obs.ctx.Observer = ctx, obs
		ctx = &obs.ctx
	case c.obs != nil:
		ctx = c.obs.context(ctx)
	}
	sig := c.next(ctx, cmd)
	// Attributes are made only for a span that records them, at its end,
	// in one call from a pooled buffer; the ones a command may lack are
	// left out, to stay within maxSpanAttrs.
	if obs != nil && obs.span != nil {
		b := getAttrs()
		kv := append(b.kv[:0],
			c.names.agg,
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
		if n := obs.retries.Load(); n > 0 {
			kv = append(kv, AttrRetries.Int(int(n)))
		}
		span.SetAttributes(kv...)
		putAttrs(b)
		if sig.Code != factum.CodeOk {
			span.SetStatus(codes.Error, string(sig.Code)+": "+sig.Message)
		}
	}
	span.End()
	if c.obs != nil {
		t.m.processing.Add(-1)
		c.observe(start, sig)
	}
	return sig
}

// observe records the latency, from start (a clock reading) to now, of
// a command that ended with sig, and its conflict if it had one.
func (c *commandType) observe(start time.Duration, sig factum.Signal) {
	t := c.t
	seconds := t.since(start)
	if sig.Code == factum.CodeOk {
		c.okSeconds.Observe(seconds)
		return
	}
	code := codeLabel(sig.Code)
	t.m.processSeconds.WithLabelValues(c.agg, code).Observe(seconds)
	if conflict(sig.Code) {
		t.m.conflicts.WithLabelValues(c.agg, code).Inc()
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
