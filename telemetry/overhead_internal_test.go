package telemetry

import (
	"context"
	"syscall"
	"testing"
	"time"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/aggregate"
	"github.com/factum-go/factum/command"
	"github.com/factum-go/factum/eventstore"
	"github.com/factum-go/factum/internal/built"
	"github.com/prometheus/client_golang/prometheus"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
)

// nopBus carries nothing.
type nopBus struct{}

func (nopBus) Send(context.Context, *factum.Command) error { return nil }

// nopStore appends nothing.
type nopStore struct{ eventstore.Store }

func (nopStore) Append(context.Context, *factum.EventStream) error { return nil }

// seams returns one command's trip through the instrumentation without
// the pipeline: the bus decorator's send, then the Commands middleware
// around steps doing what the executor does at its seams (a cache lookup
// reported to the context's observer, the stream's create time read, an
// append through the Store decorator), all in a dispatcher's context.
// Without tel the steps run undecorated. With metrics, tel runs as serve
// does at --trace-sample 0 (metricsTelemetry).
func seams(tb testing.TB, tel *Telemetry) func() {
	named := factum.NamedAggregate{Context: "shop", Aggregate: "inventory"}
	st := &factum.EventStream{Events: make([]factum.DomainEvent, 1)}
	appendStream := func(ctx context.Context) error { return nopStore{}.Append(ctx, st) }
	var bus command.Bus = nopBus{}
	if tel != nil {
		s := tel.Store(nopStore{}).(*store)
		appendStream = func(ctx context.Context) error { return s.append(ctx, st, built.Stream{}, true) }
		bus = tel.Bus(bus)
	}
	process := aggregate.CommandFunc(func(ctx context.Context, cmd *factum.Command) factum.Signal {
		if o := aggregate.CacheObserverFrom(ctx); o != nil {
			o.ObserveCache(true)
		}
		st.CreateTime = time.Now()
		if err := appendStream(ctx); err != nil {
			return factum.Signal{Code: factum.CodeOf(err)}
		}
		return factum.Signal{Code: factum.CodeOk, SignalTime: st.CreateTime}
	})
	if tel != nil {
		process = tel.Commands()(named, process)
	}
	ctx, cancel := context.WithCancel(context.Background())
	tb.Cleanup(cancel)
	cmd := &factum.Command{ID: "c", Name: "restock", AggregateID: factum.AggregateID{NamedAggregate: named, ID: "sku-1"}}
	return func() {
		if err := bus.Send(context.Background(), cmd); err != nil {
			tb.Fatal(err)
		}
		if sig := process(ctx, cmd); sig.Code != factum.CodeOk {
			tb.Fatal(sig)
		}
	}
}

// metricsTelemetry returns a Telemetry as serve runs it at --trace-sample
// 0: every metric, and tracing that starts no trace of its own.
func metricsTelemetry(tb testing.TB) *Telemetry {
	tp, err := NewTracerProvider(context.Background(), TracingConfig{Exporter: tracetest.NewInMemoryExporter(), Sample: 0})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	tel, err := New(Config{TracerProvider: tp, ContinueOnly: true, Registerer: prometheus.NewRegistry()})
	if err != nil {
		tb.Fatal(err)
	}
	return tel
}

// A command no span records costs the instrumentation no allocation: the
// observer's context is the type's, the series are resolved, and the
// histograms take integers.
func TestAnUntracedCommandsInstrumentationAllocatesNothing(t *testing.T) {
	trip := seams(t, metricsTelemetry(t))
	trip() // the type's context is made for the dispatcher's once
	if n := testing.AllocsPerRun(1000, trip); n != 0 {
		t.Errorf("%v allocations a command, want 0", n)
	}
}

// BenchmarkInstrumentation measures the instrumentation's own work per
// command (seams), without the pipeline whose cost and noise would drown
// it: off is the steps undecorated, metrics as serve runs at
// --trace-sample 0. cpu-ns/op is the process's CPU.
func BenchmarkInstrumentation(b *testing.B) {
	for _, mode := range []string{"off", "metrics"} {
		b.Run(mode, func(b *testing.B) {
			var tel *Telemetry
			if mode == "metrics" {
				tel = metricsTelemetry(b)
			}
			trip := seams(b, tel)
			b.ReportAllocs()
			var ru0, ru1 syscall.Rusage
			_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru0)
			for b.Loop() {
				trip()
			}
			_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru1)
			cpu := ru1.Utime.Nano() + ru1.Stime.Nano() - ru0.Utime.Nano() - ru0.Stime.Nano()
			b.ReportMetric(float64(cpu)/float64(b.N), "cpu-ns/op")
		})
	}
}
