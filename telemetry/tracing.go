package telemetry

import (
	"context"
	"fmt"
	"net/url"

	"github.com/factum-go/factum"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

// TracingConfig configures NewTracerProvider.
type TracingConfig struct {
	// Endpoint is an OTLP/HTTP collector's URL, such as
	// http://127.0.0.1:4318 (the path defaults to /v1/traces). Exporter,
	// when set, is used instead.
	Endpoint string
	// Exporter receives the spans (tracetest.NewInMemoryExporter in
	// tests); it is called synchronously as each span ends, unless Batch.
	Exporter sdktrace.SpanExporter
	// Batch hands Exporter the spans in batches from a goroutine, as an
	// endpoint gets them, instead of as each span ends.
	Batch bool
	// Sample is the fraction of new traces recorded, 0 to 1; a trace
	// continued from a caller follows the caller's decision.
	Sample float64
	// ServiceName is the service.name resource attribute (default
	// "factum").
	ServiceName string
}

// NewTracerProvider returns an SDK tracer provider exporting to the
// configured endpoint or exporter, in batches for an endpoint. Shut it
// down to flush the spans it holds.
func NewTracerProvider(ctx context.Context, cfg TracingConfig) (*sdktrace.TracerProvider, error) {
	if cfg.Sample < 0 || cfg.Sample > 1 {
		return nil, factum.IllegalArgument(fmt.Sprintf("telemetry: trace sample %v is not within [0, 1]", cfg.Sample))
	}
	name := cfg.ServiceName
	if name == "" {
		name = "factum"
	}
	opts := []sdktrace.TracerProviderOption{
		sdktrace.WithSampler(sdktrace.ParentBased(sdktrace.TraceIDRatioBased(cfg.Sample))),
		sdktrace.WithResource(resource.NewSchemaless(attribute.String("service.name", name))),
	}
	switch {
	case cfg.Exporter != nil && cfg.Batch:
		opts = append(opts, sdktrace.WithBatcher(cfg.Exporter))
	case cfg.Exporter != nil:
		opts = append(opts, sdktrace.WithSyncer(cfg.Exporter))
	case cfg.Endpoint != "":
		u, err := url.Parse(cfg.Endpoint)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return nil, factum.IllegalArgument(fmt.Sprintf("telemetry: OTLP endpoint %q is not an http(s) URL", cfg.Endpoint))
		}
		if u.Path == "" || u.Path == "/" {
			u.Path = "/v1/traces"
		}
		exp, err := otlptracehttp.New(ctx, otlptracehttp.WithEndpointURL(u.String()))
		if err != nil {
			return nil, fmt.Errorf("telemetry: OTLP exporter: %w", err)
		}
		opts = append(opts, sdktrace.WithBatcher(exp))
	}
	return sdktrace.NewTracerProvider(opts...), nil
}
