package nats

import (
	"context"
	"testing"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/aggregate"
)

// observerProc records the observer each command finds in its context.
type observerProc struct{ seen aggregate.CacheObserver }

func (p *observerProc) Process(ctx context.Context, _ *factum.Command) factum.Signal {
	p.seen = aggregate.CacheObserverFrom(ctx)
	return factum.Signal{}
}

// Signals.Bus's executor puts its origin header writer in the context of
// a command whose header is the origin-only one, and only there: a
// command with a header of its own, whose stream gets a copy of it
// whatever the context, finds no observer and costs no allocation, and a
// command whose context has an observer (a tracer's) keeps it.
func TestTheOriginExecutorObservesOnlyOriginOnlyCommands(t *testing.T) {
	hw := originHeader{only: map[string]string{HeaderOrigin: "i0"}, origin: "i0"}
	tracer := aggregate.CacheObserver(originHeader{origin: "tracer"})
	for _, tc := range []struct {
		name   string
		ctx    context.Context
		header map[string]string
		want   aggregate.CacheObserver
		allocs float64 // per command, at most
	}{
		{"origin only", context.Background(), map[string]string{HeaderOrigin: "i0"}, hw, 2},
		{"a header of its own", context.Background(), map[string]string{HeaderOrigin: "i0", "traceparent": "t"}, nil, 0},
		{"another origin", context.Background(), map[string]string{HeaderOrigin: "i9"}, nil, 0},
		{"an observer in front", aggregate.WithCacheObserver(context.Background(), tracer), map[string]string{HeaderOrigin: "i0"}, tracer, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := &observerProc{}
			proc := originExecutor(p, hw)
			cmd := &factum.Command{Header: tc.header}
			allocs := testing.AllocsPerRun(100, func() { proc.Process(tc.ctx, cmd) })
			if got, ok := p.seen.(originHeader); (p.seen == nil) != (tc.want == nil) || (ok && got.origin != tc.want.(originHeader).origin) {
				t.Fatalf("the command found the observer %#v, want %#v", p.seen, tc.want)
			}
			if allocs > tc.allocs {
				t.Fatalf("%.0f allocations per command, want %.0f at most", allocs, tc.allocs)
			}
		})
	}
}
