package telemetry

import (
	"context"
	"maps"

	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
)

// HeaderCarrier adapts a command's or a stream's header to the
// propagators. A nil map reads as empty; Set on a nil map panics, so
// writers make one first.
type HeaderCarrier map[string]string

// Get implements propagation.TextMapCarrier.
func (h HeaderCarrier) Get(key string) string { return h[key] }

// Set implements propagation.TextMapCarrier.
func (h HeaderCarrier) Set(key, value string) { h[key] = value }

// Keys implements propagation.TextMapCarrier.
func (h HeaderCarrier) Keys() []string {
	keys := make([]string, 0, len(h))
	for k := range h {
		keys = append(keys, k)
	}
	return keys
}

var _ propagation.TextMapCarrier = HeaderCarrier(nil)

// Extract returns ctx carrying the trace context found in header, if any.
func (t *Telemetry) Extract(ctx context.Context, header map[string]string) context.Context {
	if len(header) == 0 {
		return ctx
	}
	return t.prop.Extract(ctx, HeaderCarrier(header))
}

// Inject returns header with ctx's trace context written in: a new map,
// so that a header shared with other messages is never changed. Without a
// valid span context in ctx, header is returned as it is.
func (t *Telemetry) Inject(ctx context.Context, header map[string]string) map[string]string {
	if !trace.SpanContextFromContext(ctx).IsValid() {
		return header
	}
	h := make(map[string]string, len(header)+2)
	maps.Copy(h, header)
	t.prop.Inject(ctx, HeaderCarrier(h))
	return h
}
