package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/aggregate"
	"github.com/factum-go/factum/auth"
	"github.com/factum-go/factum/command"
	"github.com/factum-go/factum/compensation"
	"github.com/factum-go/factum/engine"
	"github.com/factum-go/factum/event"
	"github.com/factum-go/factum/eventstore"
	"github.com/factum-go/factum/httpapi"
	"github.com/factum-go/factum/idempotency"
	"github.com/factum-go/factum/prepare"
	"github.com/factum-go/factum/projection"
	"github.com/factum-go/factum/telemetry"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/spf13/pflag"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

// observeOptions are serve's observability flags: logs, metrics, traces
// and profiling. See docs/operations.md.
type observeOptions struct {
	// LogLevel and LogFormat configure the slog logger (the access log
	// and the components' errors).
	LogLevel, LogFormat string
	// AccessLog logs one line per HTTP request.
	AccessLog bool
	// Metrics serves GET /metrics.
	Metrics bool
	// OTLPEndpoint, if set, exports traces to this OTLP/HTTP collector.
	OTLPEndpoint string
	// TraceSample is the fraction of new traces recorded.
	TraceSample float64
	// TraceSpans is the span level: per-command or detailed.
	TraceSpans string
	// Pprof, if set, serves net/http/pprof on this loopback address.
	Pprof string
	// spans, if set (tests), receives every span instead of OTLP.
	spans sdktrace.SpanExporter
}

// readyTimeout bounds each store check of /readyz.
const readyTimeout = time.Second

func addObserveFlags(f *pflag.FlagSet, o *observeOptions) {
	f.StringVar(&o.LogLevel, "log-level", envOr("FACTUM_LOG_LEVEL", "info"), "log level: debug, info, warn or error (FACTUM_LOG_LEVEL)")
	f.StringVar(&o.LogFormat, "log-format", envOr("FACTUM_LOG_FORMAT", "text"), "log format: text or json (FACTUM_LOG_FORMAT)")
	f.BoolVar(&o.AccessLog, "access-log", true, "log one line per HTTP request (method, route, status, duration, command and trace ID)")
	f.BoolVar(&o.Metrics, "metrics", true, "serve Prometheus metrics at GET /metrics")
	f.StringVar(&o.OTLPEndpoint, "otlp-endpoint", envOr("FACTUM_OTLP_ENDPOINT", ""), "export traces to this OTLP/HTTP collector, such as http://127.0.0.1:4318 (off when empty; FACTUM_OTLP_ENDPOINT)")
	f.Float64Var(&o.TraceSample, "trace-sample", 1, "fraction of new traces recorded when traces are exported, 0 to 1")
	f.StringVar(&o.TraceSpans, "trace-spans", envOr("FACTUM_TRACE_SPANS", "per-command"), "spans of a command: per-command (one, its steps as events) or detailed (every hop a span; several times the cost) (FACTUM_TRACE_SPANS)")
	f.StringVar(&o.Pprof, "pprof", "", "serve net/http/pprof on this loopback address, such as 127.0.0.1:6060 (off when empty)")
}

// observer is a running service's observability: its logger, its
// telemetry and what must be closed at shutdown.
type observer struct {
	log      *slog.Logger
	tel      *telemetry.Telemetry
	registry *prometheus.Registry // nil without --metrics
	tp       *sdktrace.TracerProvider
	pprof    io.Closer
}

// observe builds the logger, the tracer provider and the metrics
// registry the options ask for; out receives the logs. Closing st closes
// them too, first, so that the last spans are flushed.
func (so serveOptions) observe(ctx context.Context, out io.Writer, st *openedStore) (*observer, error) {
	o := so.observeOptions
	backend := "sqlite"
	switch {
	case so.Memory:
		backend = "memory"
	case so.PostgresURL != "":
		backend = "postgresql"
	}
	if o.LogLevel == "" {
		o.LogLevel = "info"
	}
	level, err := telemetry.ParseLevel(o.LogLevel)
	if err != nil {
		return nil, err
	}
	logger, err := telemetry.NewLogger(out, o.LogFormat, level)
	if err != nil {
		return nil, err
	}
	spans, err := telemetry.ParseSpanLevel(o.TraceSpans)
	if err != nil {
		return nil, err
	}
	obs := &observer{log: logger}
	cfg := telemetry.Config{Backend: backend, Spans: spans}
	if o.AccessLog {
		cfg.Logger = logger
	}
	if o.Metrics {
		obs.registry = prometheus.NewRegistry()
		obs.registry.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
		cfg.Registerer = obs.registry
	}
	if o.OTLPEndpoint != "" || o.spans != nil {
		tp, err := telemetry.NewTracerProvider(ctx, telemetry.TracingConfig{Endpoint: o.OTLPEndpoint, Exporter: o.spans, Sample: o.TraceSample, ServiceName: "factum"})
		if err != nil {
			return nil, err
		}
		obs.tp, cfg.TracerProvider = tp, tp
		// At 0 no new trace is recorded: spans only continue a caller's.
		cfg.ContinueOnly = o.TraceSample == 0
	}
	if obs.tel, err = telemetry.New(cfg); err != nil {
		return nil, errors.Join(err, obs.close(ctx))
	}
	closeStore := st.close
	st.close = func() error {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		return errors.Join(obs.close(ctx), closeStore())
	}
	return obs, nil
}

// startPprof serves net/http/pprof on addr, a loopback address, when it
// is set.
func (obs *observer) startPprof(addr string, out io.Writer) error {
	if addr == "" {
		return nil
	}
	if err := loopback(addr); err != nil {
		return err
	}
	c, err := startDebug(addr, out)
	if err != nil {
		return err
	}
	obs.pprof = c
	return nil
}

// loopback refuses a pprof address off the loopback interface: profiles
// reveal memory contents and cost CPU, so they are for operators on the
// host only.
func loopback(addr string) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return factum.IllegalArgument(fmt.Sprintf("--pprof %q: %v", addr, err))
	}
	if host == "localhost" {
		return nil
	}
	if ip := net.ParseIP(host); ip == nil || !ip.IsLoopback() {
		return factum.IllegalArgument(fmt.Sprintf("--pprof %q is not a loopback address (such as 127.0.0.1:6060)", addr))
	}
	return nil
}

// store returns the event store the engine uses, instrumented.
func (obs *observer) store(s eventstore.Store) eventstore.Store { return obs.tel.Store(s) }

// idempotency and prepare return the idempotency-key store and the
// prepare-key backend counted by operation and outcome (as they are
// without metrics).
func (obs *observer) idempotency(s idempotency.Store) idempotency.Store {
	return obs.tel.IdempotencyStore(s)
}
func (obs *observer) prepare(b prepare.Backend) prepare.Backend { return obs.tel.PrepareBackend(b) }

// bus is the engine's in-process bus with the send hop traced.
func (obs *observer) bus() engine.NewBus {
	return obs.wrapBus(engine.DispatcherBus(command.DispatcherConfig{}))
}

// wrapBus traces the send hop of the buses next makes.
func (obs *observer) wrapBus(next engine.NewBus) engine.NewBus {
	return engine.SendWrapper(next, obs.tel.Bus)
}

// attempts observes the compensation's retries: a span per attempt and
// the attempts counted by outcome.
func (obs *observer) attempts() compensation.AttemptObserver { return obs.tel.Compensation() }

// commands and events are the telemetry middleware of the engine's two
// pipelines: a span and the metrics per command and per event function.
func (obs *observer) commands() []aggregate.Middleware {
	return []aggregate.Middleware{obs.tel.Commands()}
}
func (obs *observer) events() []event.Middleware { return []event.Middleware{obs.tel.Events()} }

// collect registers the collectors read at each scrape: consumer lag,
// the projections' lag and the compensation backlog.
func (obs *observer) collect(rt *engine.Engine, log eventstore.Store, checkpoints event.CheckpointStore, comp *compensation.Compensation, projections *projection.Component) error {
	if obs.registry == nil {
		return nil
	}
	lag, err := telemetry.NewLag(telemetry.LagConfig{
		Log: log, Checkpoints: checkpoints,
		Groups: func() []factum.Function {
			procs := rt.Functions().Processors()
			out := make([]factum.Function, len(procs))
			for i, p := range procs {
				out[i] = p.Name()
			}
			return out
		},
	})
	if err != nil {
		return err
	}
	backlog, err := telemetry.NewBacklog(comp.Service().Counts, 0)
	if err != nil {
		return err
	}
	plag, err := telemetry.NewProjectionLag(projections.List, 0)
	if err != nil {
		return err
	}
	return errors.Join(obs.registry.Register(lag), obs.registry.Register(backlog), obs.registry.Register(plag))
}

// handler serves /metrics (when on) beside the API, and instruments the
// API: spans, HTTP metrics and the access log. With credentials,
// /metrics needs an admin's: its figures span every tenant.
func (obs *observer) handler(api http.Handler, access httpapi.AccessConfig) http.Handler {
	h := obs.tel.HTTP(api)
	if obs.registry == nil {
		return h
	}
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", httpapi.RequireRole(access, auth.RoleAdmin, promhttp.HandlerFor(obs.registry, promhttp.HandlerOpts{
		ErrorHandling: promhttp.ContinueOnError,
		ErrorLog:      slog.NewLogLogger(obs.log.Handler(), slog.LevelError),
	})))
	mux.Handle("/", h)
	return mux
}

// close flushes the spans and stops pprof.
func (obs *observer) close(ctx context.Context) error {
	var errs []error
	if obs.tp != nil {
		errs = append(errs, obs.tp.Shutdown(ctx))
	}
	if obs.pprof != nil {
		errs = append(errs, obs.pprof.Close())
	}
	return errors.Join(errs...)
}

// storeCheck is one dependency /readyz checks.
type storeCheck struct {
	name  string
	check func(ctx context.Context) error
}

// readiness checks the stores the service depends on, at once, each
// within readyTimeout: the database connection, the event log and the
// consumers' checkpoints. A failure names every store that failed.
func (s *server) readiness(ctx context.Context) error {
	checks := []storeCheck{
		{"events", func(ctx context.Context) error {
			_, err := s.events.ReadLog(ctx, factum.Position{}, 1)
			return err
		}},
		{"checkpoints", func(ctx context.Context) error {
			_, err := s.checkpoints.Checkpoint(ctx, factum.Function{Context: boundedContext, Processor: "readyz"})
			return err
		}},
	}
	if s.store.ping != nil {
		checks = append(checks, storeCheck{"database", s.pingStore})
	}
	if s.cluster != nil {
		checks = append(checks, storeCheck{"nats", s.cluster.ready})
	}
	var mu sync.Mutex
	var failed []string
	var wg sync.WaitGroup
	for _, c := range checks {
		wg.Go(func() {
			cctx, cancel := context.WithTimeout(ctx, readyTimeout)
			defer cancel()
			if err := c.check(cctx); err != nil {
				mu.Lock()
				failed = append(failed, c.name+": "+err.Error())
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if len(failed) > 0 {
		return factum.NewError(factum.CodeInternalServerError, "not ready: "+strings.Join(failed, "; "))
	}
	return nil
}
