package command

import (
	"context"
	"testing"
	"time"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/aggregate"
	"github.com/factum-go/factum/eventstore"
)

// The specification's defaults: a wait without a timeout lasts 30 s, and a
// caller's timeout is capped by the gateway's maximum.
func TestWaitTimeoutDefaultsAndCap(t *testing.T) {
	reg, err := aggregate.NewRegistry()
	if err != nil {
		t.Fatal(err)
	}
	newGateway := func(def, maxTimeout time.Duration) *Gateway {
		g, err := NewGateway(GatewayConfig{Registry: reg, Bus: nopBus{}, Waiters: NewWaiters(), Store: eventstore.NewMemory(),
			DefaultTimeout: def, MaxTimeout: maxTimeout})
		if err != nil {
			t.Fatal(err)
		}
		return g
	}
	tests := []struct {
		name        string
		def, max    time.Duration
		plan        WaitPlan
		want        time.Duration
		wantRefused bool
	}{
		{"default", 0, 0, Wait(factum.StageProcessed), 30 * time.Second, false},
		{"caller's own", 0, 0, Wait(factum.StageProcessed).Within(time.Minute), time.Minute, false},
		{"at the default cap", 0, 0, Wait(factum.StageProcessed).Within(DefaultMaxTimeout), DefaultMaxTimeout, false},
		{"past the default cap", 0, 0, Wait(factum.StageProcessed).Within(DefaultMaxTimeout + time.Second), 0, true},
		{"past a configured cap", 0, time.Minute, Wait(factum.StageProcessed).Within(2 * time.Minute), 0, true},
		{"configured default", 5 * time.Second, time.Minute, Wait(factum.StageProcessed), 5 * time.Second, false},
		{"negative", 0, 0, Wait(factum.StageProcessed).Within(-time.Second), 0, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := newGateway(tt.def, tt.max)
			got, err := tt.plan.check(g.defTimeout, g.maxTimeout)
			if tt.wantRefused {
				if factum.CodeOf(err) != factum.CodeIllegalArgument {
					t.Fatalf("timeout %v accepted as %v (err %v), want IllegalArgument", tt.plan.Timeout, got, err)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("effective timeout %v, %v; want %v", got, err, tt.want)
			}
		})
	}
	if DefaultTimeout != 30*time.Second {
		t.Fatalf("DefaultTimeout = %v, the specification says 30 s", DefaultTimeout)
	}
	if _, err := NewGateway(GatewayConfig{Registry: reg, Bus: nopBus{}, Waiters: NewWaiters(), Store: eventstore.NewMemory(),
		DefaultTimeout: time.Hour, MaxTimeout: time.Minute}); factum.CodeOf(err) != factum.CodeIllegalArgument {
		t.Fatalf("a default above the cap: %v", err)
	}
}

// nopBus accepts every command and does nothing with it.
type nopBus struct{}

func (nopBus) Send(context.Context, *factum.Command) error { return nil }
