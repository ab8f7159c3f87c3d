package telemetry_test

import (
	"context"
	"slices"
	"testing"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/aggregate"
	"github.com/factum-go/factum/codec"
	"github.com/factum-go/factum/eventstore"
	"github.com/factum-go/factum/telemetry"
)

type (
	ledger   struct{}
	reserve  struct{}
	reserved struct{}
	// noop is an effect that is always applied.
	noop struct{}
)

func (noop) Apply(context.Context) (bool, error) { return true, nil }
func (noop) Undo(context.Context) error          { return nil }

// At the per-command level the effects a handler bound are an event on the
// command's span (factum.effects), as a cache miss's load is; the decision
// and the append that succeed have none.
func TestBoundEffectsAreAnEventOnTheCommandsSpan(t *testing.T) {
	tel, exp, _ := newTracedAt(t, 1, telemetry.SpansPerCommand)
	def := aggregate.New[ledger]("bank", "ledger",
		aggregate.Emits[ledger, reserved](),
		aggregate.Handle(func(ctx context.Context, _ ledger, _ reserve) ([]any, error) {
			if err := aggregate.Bind(ctx, noop{}); err != nil {
				return nil, err
			}
			return []any{reserved{}}, nil
		}, aggregate.AllowCreate()),
	)
	p, err := def.NewExecutor(aggregate.ExecutorConfig{
		Store: tel.Store(eventstore.NewMemory()), Codec: codec.NewRegistry(), Middleware: []aggregate.Middleware{tel.Commands()},
	})
	if err != nil {
		t.Fatal(err)
	}
	cmd := factum.NewCommand(def.ID("l-1"), reserve{})
	cmd.AllowCreate = true
	if sig := p.Process(context.Background(), &cmd); sig.Code != factum.CodeOk {
		t.Fatalf("outcome %s (%s), want Ok", sig.Code, sig.Message)
	}
	spans := exp.GetSpans()
	if len(spans) != 1 {
		t.Fatalf("%d spans, want 1", len(spans))
	}
	var got []string
	for _, e := range spans[0].Events {
		got = append(got, e.Name)
	}
	if want := []string{"factum.load", "factum.effects"}; !slices.Equal(got, want) {
		t.Errorf("events %q, want %q", got, want)
	}
}
