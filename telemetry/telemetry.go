package telemetry

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/factum-go/factum"
	"github.com/prometheus/client_golang/prometheus"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"
)

// ScopeName is the instrumentation scope of factum's spans.
const ScopeName = "github.com/factum-go/factum"

// Config configures a Telemetry. The zero value instruments nothing: no
// spans, no metrics, no access log.
type Config struct {
	// TracerProvider makes the spans; nil means a no-op tracer.
	TracerProvider trace.TracerProvider
	// Propagator carries the trace context in command and event headers
	// and HTTP requests; nil means W3C trace context and baggage.
	Propagator propagation.TextMapPropagator
	// Registerer receives the metrics; nil means no metrics.
	Registerer prometheus.Registerer
	// Logger receives the access log, one line per HTTP request; nil
	// means none.
	Logger *slog.Logger
	// ContinueOnly starts spans only inside a trace a caller began (a
	// span in the context, or a trace context in the header or the HTTP
	// request), never a new trace. Under a sampler that records no new
	// trace (a ratio of 0) the outcome is the same, without the cost of
	// making and dropping a span per command.
	ContinueOnly bool
	// Backend names the event store's backend in metric labels and the
	// db.system.name attribute, such as "postgresql" (default "memory").
	Backend string
	// Spans is how many spans a command's processing records (default
	// SpansPerCommand: one, with its hops as events on it).
	Spans SpanLevel
}

// Telemetry is the instrumentation of one service. It is safe for
// concurrent use; its middleware and decorators may be used many times.
type Telemetry struct {
	tracer       trace.Tracer
	tp           trace.TracerProvider
	prop         propagation.TextMapPropagator
	defaultProp  bool // prop is the default: W3C trace context and baggage
	tracing      bool
	continueOnly bool
	detailed     bool
	m            *metrics // nil when metrics are off
	log          *slog.Logger
	backend      string
	// epoch is when the Telemetry was made: latencies are measured as
	// time since it (one monotonic clock reading, where time.Now reads the
	// wall clock too).
	epoch         time.Time
	typeNames     sync.Map // factum.NamedAggregate -> *typeNames
	typeNameCount atomic.Int32
}

// New returns the Telemetry cfg describes, having registered its metrics
// with cfg.Registerer; a registration refused (a name registered twice)
// is returned.
func New(cfg Config) (*Telemetry, error) {
	if cfg.Spans > SpansDetailed {
		return nil, factum.IllegalArgument(fmt.Sprintf("telemetry: unknown span level %d", cfg.Spans))
	}
	t := &Telemetry{epoch: time.Now(), tp: cfg.TracerProvider, prop: cfg.Propagator, log: cfg.Logger, backend: cfg.Backend, continueOnly: cfg.ContinueOnly,
		detailed: cfg.Spans == SpansDetailed}
	if t.tp == nil {
		t.tp = noop.NewTracerProvider()
	} else {
		t.tracing = true
	}
	// messaging.system is the scope's, not each span's: see maxSpanAttrs.
	t.tracer = t.tp.Tracer(ScopeName, trace.WithInstrumentationAttributes(messagingSystem))
	if t.prop == nil {
		t.prop = propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{})
		t.defaultProp = true
	}
	if t.backend == "" {
		t.backend = "memory"
	}
	if cfg.Registerer != nil {
		m, err := newMetrics(cfg.Registerer, t.backend)
		if err != nil {
			return nil, err
		}
		t.m = m
	}
	return t, nil
}

// Tracer returns the tracer of factum's spans.
func (t *Telemetry) Tracer() trace.Tracer { return t.tracer }

// Propagator returns the propagator of the trace context.
func (t *Telemetry) Propagator() propagation.TextMapPropagator { return t.prop }

// traces reports whether a span is to be started in ctx: tracing is on,
// and, under ContinueOnly, ctx is inside a trace.
func (t *Telemetry) traces(ctx context.Context) bool {
	return t.tracing && (!t.continueOnly || trace.SpanContextFromContext(ctx).IsValid())
}

// clock returns the time since t's epoch, for latencies: one monotonic
// clock reading.
func (t *Telemetry) clock() time.Duration { return time.Since(t.epoch) }

// since returns the seconds from start, a clock reading, to now.
func (t *Telemetry) since(start time.Duration) float64 { return (t.clock() - start).Seconds() }
