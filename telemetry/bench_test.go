package telemetry_test

import (
	"context"
	"fmt"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/command"
	"github.com/factum-go/factum/examples/order"
	"github.com/factum-go/factum/telemetry"
	"github.com/prometheus/client_golang/prometheus"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
)

// BenchmarkSendAndWait measures SendAndWait(PROCESSED) in memory through
// the pipeline without telemetry (off), with metrics and tracing sampled
// at 0 as serve runs it (metrics: ContinueOnly), the metrics alone
// (metrics-only), the SDK making and dropping a span per hop at sampling 0
// without ContinueOnly (sampled-0-only), and with every trace recorded to an in-memory exporter,
// in batches as to a collector (traced, one span a command with its steps
// as events; traced-detailed with every hop a span; traced-retain to an in-memory
// exporter keeping the SDK's spans instead of copying each into a
// SpanStub as tracetest's does) or synchronously as each span ends
// (traced-sync), or to an exporter that drops them (traced-discard, the
// instrumentation's own cost); floor is the pipeline without telemetry
// and one span a command, with the process span's attributes, made by the
// benchmark itself (the SDK's share of traced): run it with -count to
// alternate the modes in one run, and compare (docs/performance.md).
func BenchmarkSendAndWait(b *testing.B) {
	for _, mode := range []string{"off", "metrics", "metrics-only", "sampled-0-only", "traced", "traced-retain", "traced-sync", "traced-discard", "traced-detailed", "floor"} {
		batch := mode == "traced" || mode == "traced-retain" || mode == "traced-detailed"
		b.Run(mode, func(b *testing.B) {
			var tel *telemetry.Telemetry
			var exp interface{ Reset() }
			switch mode {
			case "metrics":
				// What serve runs at --trace-sample 0.
				tp, err := telemetry.NewTracerProvider(context.Background(), telemetry.TracingConfig{Exporter: tracetest.NewInMemoryExporter(), Sample: 0})
				if err != nil {
					b.Fatal(err)
				}
				b.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
				if tel, err = telemetry.New(telemetry.Config{TracerProvider: tp, ContinueOnly: true, Registerer: prometheus.NewRegistry()}); err != nil {
					b.Fatal(err)
				}
			case "metrics-only":
				var err error
				if tel, err = telemetry.New(telemetry.Config{Registerer: prometheus.NewRegistry()}); err != nil {
					b.Fatal(err)
				}
			case "sampled-0-only":
				tp, err := telemetry.NewTracerProvider(context.Background(), telemetry.TracingConfig{Exporter: tracetest.NewInMemoryExporter(), Sample: 0})
				if err != nil {
					b.Fatal(err)
				}
				b.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
				if tel, err = telemetry.New(telemetry.Config{TracerProvider: tp}); err != nil {
					b.Fatal(err)
				}
			case "traced-discard":
				tp, err := telemetry.NewTracerProvider(context.Background(), telemetry.TracingConfig{Exporter: discard{}, Sample: 1})
				if err != nil {
					b.Fatal(err)
				}
				b.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
				if tel, err = telemetry.New(telemetry.Config{TracerProvider: tp, Registerer: prometheus.NewRegistry()}); err != nil {
					b.Fatal(err)
				}
			case "traced", "traced-retain", "traced-sync", "traced-detailed":
				var spans sdktrace.SpanExporter
				if mode == "traced-retain" {
					r := &retain{}
					exp, spans = r, r
				} else {
					m := tracetest.NewInMemoryExporter()
					exp, spans = m, m
				}
				tp, err := telemetry.NewTracerProvider(context.Background(), telemetry.TracingConfig{Exporter: spans, Sample: 1, Batch: batch})
				if err != nil {
					b.Fatal(err)
				}
				b.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
				level := telemetry.SpansPerCommand
				if mode == "traced-detailed" {
					level = telemetry.SpansDetailed
				}
				if tel, err = telemetry.New(telemetry.Config{TracerProvider: tp, Registerer: prometheus.NewRegistry(), Spans: level}); err != nil {
					b.Fatal(err)
				}
			}
			var floor trace.Tracer
			if mode == "floor" {
				// The SDK's own cost of one recorded span a command, as
				// traced exports them, around a pipeline without
				// telemetry: what no instrumentation recording a span per
				// command can undercut.
				m := tracetest.NewInMemoryExporter()
				exp = m
				tp, err := telemetry.NewTracerProvider(context.Background(), telemetry.TracingConfig{Exporter: m, Sample: 1, Batch: true})
				if err != nil {
					b.Fatal(err)
				}
				b.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
				floor = tp.Tracer(telemetry.ScopeName)
			}
			p := newPipeline(b, tel)
			ctx := context.Background()
			const aggregates = 64
			b.ReportAllocs()
			b.ResetTimer()
			cpu := processCPU()
			i := 0
			for b.Loop() {
				id := order.Inventory.ID(fmt.Sprintf("sku-%d", i%aggregates))
				cmd := factum.NewCommand(id, order.Restock{Qty: 1})
				var span trace.Span
				if floor != nil {
					_, span = floor.Start(ctx, "factum.process shop.inventory", spanKind...)
				}
				res, err := p.gw.SendAndWait(ctx, cmd, command.Wait(factum.StageProcessed))
				if err != nil {
					b.Fatal(err)
				}
				if span != nil {
					span.SetAttributes(
						telemetry.AttrAggregate.String("shop.inventory"), telemetry.AttrAggregateID.String(id.ID),
						telemetry.AttrCommandID.String(cmd.ID), telemetry.AttrCommandName.String(cmd.Name),
						telemetry.AttrStage.String(res.Stage.String()), telemetry.AttrCode.String(string(res.Code)), telemetry.AttrAggregateVersion.Int(res.AggregateVersion),
					)
					span.End()
				}
				i++
				if exp != nil && i%256 == 0 {
					exp.Reset() // it keeps every span; what is measured is making and handing them over
				}
			}
			if b.N > 0 {
				b.ReportMetric(float64(processCPU()-cpu)/float64(b.N), "cpu-ns/op")
			}
		})
	}
}

var spanKind = []trace.SpanStartOption{trace.WithSpanKind(trace.SpanKindConsumer)}

// retain is an in-memory exporter that keeps the spans it is handed as
// they are, where tracetest's copies each into a SpanStub.
type retain struct {
	mu    sync.Mutex
	spans []sdktrace.ReadOnlySpan
}

func (r *retain) ExportSpans(_ context.Context, spans []sdktrace.ReadOnlySpan) error {
	r.mu.Lock()
	r.spans = append(r.spans, spans...)
	r.mu.Unlock()
	return nil
}
func (r *retain) Shutdown(context.Context) error { return nil }

// Reset drops the spans kept so far, as tracetest's does.
func (r *retain) Reset() {
	r.mu.Lock()
	r.spans = r.spans[:0:0]
	r.mu.Unlock()
}

// discard is an exporter that drops every span.
type discard struct{}

func (discard) ExportSpans(context.Context, []sdktrace.ReadOnlySpan) error { return nil }
func (discard) Shutdown(context.Context) error                             { return nil }

// processCPU is the CPU time (user and system, every thread) the process
// has spent: on a shared machine CPU per command is steadier than wall
// time, and includes the exporter's goroutine.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkSpan measures the OpenTelemetry SDK's own cost of one recorded
// span with seven attributes, started and ended in a trace and handed to
// an exporter that drops it, through the batching span processor
// (batched) or synchronously (synchronous): the floor under the traced
// modes of BenchmarkSendAndWait, which make three a command, and the
// batch processor's hand-off to its goroutine.
func BenchmarkSpan(b *testing.B) {
	for _, batch := range []bool{true, false} {
		name := "synchronous"
		if batch {
			name = "batched"
		}
		b.Run(name, func(b *testing.B) {
			tp, err := telemetry.NewTracerProvider(context.Background(), telemetry.TracingConfig{Exporter: discard{}, Sample: 1, Batch: batch})
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
			tr := tp.Tracer(telemetry.ScopeName)
			ctx, root := tr.Start(context.Background(), "root")
			defer root.End()
			b.ReportAllocs()
			cpu := processCPU()
			for b.Loop() {
				_, span := tr.Start(ctx, "factum.process shop.inventory")
				span.SetAttributes(
					telemetry.AttrAggregate.String("shop.inventory"), telemetry.AttrAggregateID.String("sku-1"),
					telemetry.AttrCommandID.String("01J0000000000000000000000"), telemetry.AttrCommandName.String("restock"),
					telemetry.AttrStage.String("PROCESSED"), telemetry.AttrCode.String("Ok"), telemetry.AttrAggregateVersion.Int(7),
				)
				span.End()
			}
			if b.N > 0 {
				b.ReportMetric(float64(processCPU()-cpu)/float64(b.N), "cpu-ns/op")
			}
		})
	}
}
