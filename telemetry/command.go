package telemetry

import (
	"context"
	"sync/atomic"
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
)

// Span options and attributes made once.
var (
	consumerKind    = trace.WithSpanKind(trace.SpanKindConsumer)
	producerKind    = trace.WithSpanKind(trace.SpanKindProducer)
	clientKind      = trace.WithSpanKind(trace.SpanKindClient)
	messagingSystem = attribute.String("messaging.system", "factum")
)

// cmdCounter counts, for one command's processing, the appends it makes
// (the retries after a version conflict are the appends past the first)
// and the state cache's hits and misses. It travels in the context as the
// processor's aggregate.CacheObserver, where the Store decorator finds it
// too: one context value a command.
type cmdCounter struct{ appends, hits, misses atomic.Int32 }

// ObserveCache implements aggregate.CacheObserver.
func (c *cmdCounter) ObserveCache(hit bool) {
	if hit {
		c.hits.Add(1)
	} else {
		c.misses.Add(1)
	}
}

func countAppend(ctx context.Context) {
	if c, ok := aggregate.CacheObserverFrom(ctx).(*cmdCounter); ok {
		c.appends.Add(1)
	}
}

// Commands returns the command-pipeline middleware: per command, a span
// continuing the trace in the command's header (with the stage, code and
// version reached), the processing latency by aggregate type and code,
// conflicts by code, and retries. The span's context is written into the
// header the processor copies to the stream, so the event functions that
// handle the stream continue from it.
func (t *Telemetry) Commands() aggregate.Middleware {
	return func(named factum.NamedAggregate, next aggregate.CommandFunc) aggregate.CommandFunc {
		names := t.names(named)
		agg := named.String()
		// The series of the common outcome are looked up once.
		var okSeconds prometheus.Observer
		var hits, misses prometheus.Counter
		if t.m != nil {
			okSeconds = t.m.processSeconds.WithLabelValues(agg, string(factum.CodeOk))
			hits = t.m.cacheLookups.WithLabelValues(agg, "hit")
			misses = t.m.cacheLookups.WithLabelValues(agg, "miss")
		}
		return func(ctx context.Context, cmd *factum.Command) factum.Signal {
			var start time.Time
			var counter *cmdCounter
			if t.m != nil {
				start = time.Now()
				counter = &cmdCounter{}
				ctx = aggregate.WithCacheObserver(ctx, counter)
				t.m.inFlight.Inc()
			}
			var span trace.Span
			if t.tracing {
				ctx = t.Extract(ctx, cmd.Header)
			}
			if t.traces(ctx) {
				ctx, span = t.tracer.Start(ctx, names.process, consumerKind)
				// The processor copies this header to the stream, so the
				// event functions continue from this span.
				if span.IsRecording() {
					c := *cmd
					c.Header = t.Inject(ctx, cmd.Header)
					cmd = &c
				}
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
				if cmd.RequestID != "" {
					kv = append(kv, AttrRequestID.String(cmd.RequestID))
				}
				if cmd.AggregateID.Tenant != "" {
					kv = append(kv, AttrTenant.String(cmd.AggregateID.Tenant))
				}
				if counter != nil && counter.appends.Load() > 1 {
					kv = append(kv, AttrRetries.Int(int(counter.appends.Load()-1)))
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
				t.m.inFlight.Dec()
				if sig.Code == factum.CodeOk {
					okSeconds.Observe(time.Since(start).Seconds())
				} else {
					code := codeLabel(sig.Code)
					t.m.processSeconds.WithLabelValues(agg, code).Observe(time.Since(start).Seconds())
					if conflict(sig.Code) {
						t.m.conflicts.WithLabelValues(agg, code).Inc()
					}
				}
				if n := counter.appends.Load(); n > 1 {
					t.m.retries.WithLabelValues(agg).Add(float64(n - 1))
				}
				if n := counter.hits.Load(); n > 0 {
					hits.Add(float64(n))
				}
				if n := counter.misses.Load(); n > 0 {
					misses.Add(float64(n))
				}
			}
			return sig
		}
	}
}

// Bus returns next instrumented: a producer span per send, a child of the
// sender's span (an HTTP request, a saga's event function), whose context
// is written into the command's header before the bus carries it, and a
// count of sends by outcome. The command is copied, never changed.
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
	if t.traces(ctx) {
		names := t.names(cmd.AggregateID.NamedAggregate)
		var span trace.Span
		ctx, span = t.tracer.Start(ctx, names.send, producerKind)
		defer span.End()
		if span.IsRecording() { // an unsampled trace needs no continuation
			b := getAttrs()
			span.SetAttributes(append(b.kv[:0], names.agg, AttrCommandID.String(cmd.ID), AttrCommandName.String(cmd.Name))...)
			putAttrs(b)
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
	err := b.next.Send(ctx, cmd)
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
