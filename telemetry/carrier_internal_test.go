package telemetry

import (
	"context"
	"maps"
	"testing"

	"go.opentelemetry.io/otel/baggage"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
)

// The direct traceparent writes what the default propagator writes, for
// every flag combination, and a trace state or baggage goes through the
// propagator itself.
func TestInjectWritesWhatThePropagatorWrites(t *testing.T) {
	tel, err := New(Config{})
	if err != nil {
		t.Fatal(err)
	}
	member, err := baggage.NewMember("k", "v")
	if err != nil {
		t.Fatal(err)
	}
	bag, err := baggage.New(member)
	if err != nil {
		t.Fatal(err)
	}
	state, err := trace.ParseTraceState("vendor=x")
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name  string
		flags trace.TraceFlags
		state trace.TraceState
		bag   bool
	}{
		{"sampled", trace.FlagsSampled, trace.TraceState{}, false},
		{"unsampled", 0, trace.TraceState{}, false},
		{"random", trace.FlagsSampled | trace.FlagsRandom, trace.TraceState{}, false},
		{"undefined flags dropped", 0xfd, trace.TraceState{}, false},
		{"trace state", trace.FlagsSampled, state, false},
		{"baggage", trace.FlagsSampled, trace.TraceState{}, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			sc := trace.NewSpanContext(trace.SpanContextConfig{
				TraceID:    trace.TraceID{0x4b, 0xf9, 0x2f, 0x35, 0x77, 0xb3, 0x4d, 0xa6, 0xa3, 0xce, 0x92, 0x9d, 0x0e, 0x0e, 0x47, 0x36},
				SpanID:     trace.SpanID{0x00, 0xf0, 0x67, 0xaa, 0x0b, 0xa9, 0x02, 0xb7},
				TraceFlags: tt.flags, TraceState: tt.state,
			})
			ctx := trace.ContextWithSpanContext(context.Background(), sc)
			if tt.bag {
				ctx = baggage.ContextWithBaggage(ctx, bag)
			}
			got := map[string]string{"k": "v"}
			tel.inject(ctx, got)
			want := map[string]string{"k": "v"}
			propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{}).Inject(ctx, propagation.MapCarrier(want))
			if !maps.Equal(got, want) {
				t.Fatalf("inject wrote %v, the propagator %v", got, want)
			}
		})
	}
}
