package telemetry

import (
	"log/slog"
	"net/http"
	"strconv"
	"time"

	"github.com/factum-go/factum"
	"go.opentelemetry.io/contrib/instrumentation/net/http/otelhttp"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
)

// Headers of the HTTP API the access log reads.
const (
	headerCommandID = "Command-Id"
	headerWaitStage = "Command-Wait-Stage"
)

// HTTP returns next instrumented: a server span per request (otelhttp,
// named by method and route template, continuing a caller's W3C trace
// context), requests by method, route and status, latency by route, the
// wait latency of commands by stage and outcome, and one access-log line
// per request: method, route template, status, duration, command ID and
// trace ID, never a header value or a body.
func (t *Telemetry) HTTP(next http.Handler) http.Handler {
	rt := newRouter()
	inner := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		route, isCommand := rt.route(r)
		stage := ""
		if isCommand {
			stage = waitStage(r)
		}
		if t.m != nil {
			t.m.httpInFlight.Inc()
			if isCommand {
				t.m.waiting.Inc()
			}
		}
		rec := &recorder{ResponseWriter: w}
		defer func() {
			d := time.Since(start)
			status := rec.status
			if status == 0 {
				status = http.StatusOK
			}
			if t.m != nil {
				t.m.httpInFlight.Dec()
				t.m.httpRequests.WithLabelValues(r.Method, route, strconv.Itoa(status)).Inc()
				t.m.httpSeconds.WithLabelValues(r.Method, route).Observe(d.Seconds())
				if isCommand {
					t.m.waiting.Dec()
					t.m.waitSeconds.WithLabelValues(stage, outcomeOf(status)).Observe(d.Seconds())
				}
			}
			if t.log != nil {
				attrs := []slog.Attr{
					slog.String("method", r.Method), slog.String("route", route), slog.Int("status", status),
					slog.Duration("duration", d),
				}
				if id := w.Header().Get(headerCommandID); id != "" {
					attrs = append(attrs, slog.String("command_id", id))
				}
				if sc := trace.SpanContextFromContext(r.Context()); sc.IsValid() {
					attrs = append(attrs, slog.String("trace_id", sc.TraceID().String()))
				}
				t.log.LogAttrs(r.Context(), slog.LevelInfo, "http request", attrs...)
			}
		}()
		next.ServeHTTP(rec, r)
	})
	if !t.tracing {
		return inner
	}
	return otelhttp.NewHandler(inner, "factum.http",
		otelhttp.WithTracerProvider(t.tp),
		otelhttp.WithPropagators(t.prop),
		otelhttp.WithSpanNameFormatter(func(_ string, r *http.Request) string {
			route, _ := rt.route(r)
			return route
		}),
		otelhttp.WithFilter(func(r *http.Request) bool {
			if !t.continueOnly {
				return true
			}
			return trace.SpanContextFromContext(t.prop.Extract(r.Context(), propagation.HeaderCarrier(r.Header))).IsValid()
		}),
	)
}

// waitStage is the stage a command request waits for, as a bounded
// label: PROCESSED by default, "invalid" for a name that is no stage.
func waitStage(r *http.Request) string {
	v := r.Header.Get(headerWaitStage)
	if v == "" {
		return factum.StageProcessed.String()
	}
	s, err := factum.ParseCommandStage(v)
	if err != nil {
		return "invalid"
	}
	return s.String()
}

// outcomeOf maps a response status to a bounded outcome.
func outcomeOf(status int) string {
	switch {
	case status < 400:
		return "ok"
	case status == http.StatusRequestTimeout || status == http.StatusGatewayTimeout:
		return "timeout"
	case status == http.StatusConflict:
		return "conflict"
	case status == http.StatusTooManyRequests || status == http.StatusServiceUnavailable:
		return "rejected"
	case status < 500:
		return "refused"
	}
	return "error"
}

// recorder keeps the status a handler writes. Unwrap lets
// http.ResponseController reach the writer beneath (Server-Sent Events
// flush through it).
type recorder struct {
	http.ResponseWriter
	status int
}

func (r *recorder) WriteHeader(code int) {
	if r.status == 0 {
		r.status = code
	}
	r.ResponseWriter.WriteHeader(code)
}

func (r *recorder) Write(b []byte) (int, error) {
	if r.status == 0 {
		r.status = http.StatusOK
	}
	return r.ResponseWriter.Write(b)
}

// Unwrap returns the wrapped writer.
func (r *recorder) Unwrap() http.ResponseWriter { return r.ResponseWriter }

// Flush implements http.Flusher for handlers that assert it.
func (r *recorder) Flush() {
	_ = http.NewResponseController(r.ResponseWriter).Flush()
}
