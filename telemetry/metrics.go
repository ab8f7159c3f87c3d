package telemetry

import (
	"sync/atomic"

	"github.com/factum-go/factum"
	"github.com/prometheus/client_golang/prometheus"
)

// latencyBuckets span 100 µs to 10 s: an in-memory command takes tens of
// microseconds, a wait for a branch stage over PostgreSQL seconds.
var latencyBuckets = []float64{.0001, .00025, .0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10}

// batchBuckets are events per appended stream.
var batchBuckets = []float64{1, 2, 4, 8, 16, 32, 64, 128}

// metrics are the collectors a Telemetry observes into.
type metrics struct {
	httpRequests *prometheus.CounterVec   // method, route, status
	httpSeconds  *prometheus.HistogramVec // method, route
	httpInFlight prometheus.Gauge
	waitSeconds  *prometheus.HistogramVec // stage, outcome
	waiting      prometheus.Gauge

	processSeconds *prometheus.HistogramVec // aggregate, code
	conflicts      *prometheus.CounterVec   // aggregate, code
	retries        *prometheus.CounterVec   // aggregate
	inFlight       prometheus.GaugeFunc     // reads processing
	// processing counts the commands being processed: an atomic add per
	// command's start and end, where a prometheus.Gauge takes a
	// compare-and-swap loop over a float each.
	processing   atomic.Int64
	cacheLookups *prometheus.CounterVec // aggregate, result

	idempotency *prometheus.CounterVec // operation, outcome
	prepare     *prometheus.CounterVec // operation, outcome

	sends   *prometheus.CounterVec // outcome
	sendsOk prometheus.Counter

	appendSeconds *prometheus.HistogramVec // backend, outcome
	appendEvents  *prometheus.HistogramVec // backend
	appendOk      prometheus.Observer      // the backend's Ok series
	appendSize    prometheus.Observer      // the backend's batch sizes

	functionSeconds  *prometheus.HistogramVec // function, stage, outcome
	functionFailures *prometheus.CounterVec   // function, stage

	compensationAttempts *prometheus.CounterVec // function, outcome
}

func newMetrics(reg prometheus.Registerer, backend string) (*metrics, error) {
	m := &metrics{
		httpRequests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "factum_http_requests_total", Help: "HTTP requests answered, by method, route template and status.",
		}, []string{"method", "route", "status"}),
		httpSeconds: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "factum_http_request_duration_seconds", Help: "HTTP request latency, by method and route template.", Buckets: latencyBuckets,
		}, []string{"method", "route"}),
		httpInFlight: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "factum_http_requests_in_flight", Help: "HTTP requests being served.",
		}),
		waitSeconds: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "factum_command_wait_duration_seconds", Help: "Latency of a command sent over HTTP until the stage it waited for, by stage and outcome (the error code, Ok on success).", Buckets: latencyBuckets,
		}, []string{"stage", "outcome"}),
		waiting: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "factum_commands_waiting", Help: "Commands sent over HTTP whose callers wait for a stage.",
		}),
		processSeconds: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "factum_command_process_duration_seconds", Help: "Processing latency of a command (load, decide, append, retries), by aggregate type and PROCESSED code.", Buckets: latencyBuckets,
		}, []string{"aggregate", "code"}),
		conflicts: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "factum_command_conflicts_total", Help: "Commands refused by a conflict, by aggregate type and code.",
		}, []string{"aggregate", "code"}),
		retries: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "factum_command_retries_total", Help: "Retries the processor made after a version conflict or a transient store error, by aggregate type.",
		}, []string{"aggregate"}),
		cacheLookups: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "factum_state_cache_lookups_total", Help: "Aggregate state lookups in the processor's state cache, one per processing attempt, by aggregate type and result (hit, or miss: loaded from the store).",
		}, []string{"aggregate", "result"}),
		idempotency: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "factum_idempotency_key_operations_total", Help: "Idempotency-key store calls, by operation (begin, complete, fail, renew, get) and outcome (created, replayed, in_progress, conflict, ok, found, not_found, or the error's code).",
		}, []string{"operation", "outcome"}),
		prepare: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "factum_prepare_key_operations_total", Help: "Prepare-key (reservation) backend calls, by operation (prepare, get, rollback, rollback_value, reprepare, change_key) and outcome (done, refused, found, not_found, or the error's code).",
		}, []string{"operation", "outcome"}),
		sends: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "factum_bus_sends_total", Help: "Commands handed to the command bus, by outcome (Ok or the refusal's code).",
		}, []string{"outcome"}),
		appendSeconds: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "factum_store_append_duration_seconds", Help: "Event store append latency, by backend and outcome (Ok or the error code).", Buckets: latencyBuckets,
		}, []string{"backend", "outcome"}),
		appendEvents: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "factum_store_append_events", Help: "Events per appended stream, by backend.", Buckets: batchBuckets,
		}, []string{"backend"}),
		functionSeconds: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "factum_function_duration_seconds", Help: "Event function latency per stream, by function, stage and outcome (ok or error).", Buckets: latencyBuckets,
		}, []string{"function", "stage", "outcome"}),
		functionFailures: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "factum_function_failures_total", Help: "Event function attempts that failed, by function and stage.",
		}, []string{"function", "stage"}),
		compensationAttempts: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "factum_compensation_attempts_total", Help: "Compensation retries of failed event functions, by function and outcome (SUCCEEDED, FAILED, SKIPPED: another scheduler took it or it is no longer due; or the error's code when the retry itself failed).",
		}, []string{"function", "outcome"}),
	}
	m.inFlight = prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "factum_commands_in_flight", Help: "Commands being processed.",
	}, func() float64 { return float64(m.processing.Load()) })
	for _, c := range []prometheus.Collector{
		m.httpRequests, m.httpSeconds, m.httpInFlight, m.waitSeconds, m.waiting,
		m.processSeconds, m.conflicts, m.retries, m.inFlight, m.cacheLookups, m.idempotency, m.prepare, m.sends,
		m.appendSeconds, m.appendEvents, m.functionSeconds, m.functionFailures, m.compensationAttempts,
	} {
		if err := reg.Register(c); err != nil {
			return nil, factum.Errorf(factum.CodeIllegalArgument, "telemetry: register metrics: %w", err)
		}
	}
	m.sendsOk = m.sends.WithLabelValues(string(factum.CodeOk))
	m.appendOk = m.appendSeconds.WithLabelValues(backend, string(factum.CodeOk))
	m.appendSize = m.appendEvents.WithLabelValues(backend)
	return m, nil
}

// codeLabel bounds a code to the known set: a custom code a command
// handler made up becomes "Other".
func codeLabel(c factum.Code) string {
	if c.Valid() {
		return string(c)
	}
	return "Other"
}

// errLabel is the code label of err: Ok for nil.
func errLabel(err error) string {
	if err == nil {
		return string(factum.CodeOk)
	}
	return codeLabel(factum.CodeOf(err))
}

// conflict reports whether the code is a conflict worth its own counter.
func conflict(c factum.Code) bool {
	switch c {
	case factum.CodeEventVersionConflict, factum.CodeCommandExpectVersionConflict, factum.CodeSourcingVersionConflict,
		factum.CodeDuplicateRequestID, factum.CodeDuplicateAggregateID:
		return true
	}
	return false
}
