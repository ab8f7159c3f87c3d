package telemetry

import (
	"context"
	"encoding/hex"
	"maps"

	"go.opentelemetry.io/otel/baggage"

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
	t.inject(ctx, h)
	return h
}

// inject writes ctx's trace context into h. Under the default
// propagator, a span context without a trace state in a context without
// baggage (factum's own spans, every command and event function) is
// written as its traceparent directly, which is what the propagator would
// write, without its composite's and its carrier's indirections.
func (t *Telemetry) inject(ctx context.Context, h map[string]string) {
	sc := trace.SpanContextFromContext(ctx)
	if !t.defaultProp || !sc.IsValid() || sc.TraceState().Len() > 0 || baggage.FromContext(ctx).Len() > 0 {
		t.prop.Inject(ctx, HeaderCarrier(h))
		return
	}
	h[traceparentHeader] = traceparent(sc)
}

// traceparentHeader is the W3C trace context's header.
const traceparentHeader = "traceparent"

// traceparent formats sc as a W3C traceparent of version 00, with the
// flags the specification defines (sampled and random).
func traceparent(sc trace.SpanContext) string {
	var b [55]byte
	b[0], b[1], b[2] = '0', '0', '-'
	tid, sid := sc.TraceID(), sc.SpanID()
	hex.Encode(b[3:35], tid[:])
	b[35] = '-'
	hex.Encode(b[36:52], sid[:])
	b[52] = '-'
	hex.Encode(b[53:55], []byte{byte(sc.TraceFlags() & (trace.FlagsSampled | trace.FlagsRandom))})
	return string(b[:])
}
