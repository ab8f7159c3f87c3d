package command_test

import (
	"context"
	"errors"
	"testing"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/command"
)

type nopProcessor struct{}

func (nopProcessor) Process(_ context.Context, cmd *factum.Command) factum.Signal {
	return factum.Signal{CommandID: cmd.ID, Stage: factum.StageProcessed, Code: factum.CodeOk}
}

type nopSink struct{}

func (nopSink) Signal(factum.Signal) {}

// TestShutDownDispatcherFailsWithErrClosed: after Shutdown, Send and a
// second Shutdown fail with errors that match factum.ErrClosed (the one
// closed sentinel every package shares) and command.ErrClosed alike.
func TestShutDownDispatcherFailsWithErrClosed(t *testing.T) {
	d, err := command.NewDispatcher(nopProcessor{}, nopSink{}, command.DispatcherConfig{})
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	d.Start(ctx)
	if err := d.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	cmd := new(factum.Command)
	*cmd = factum.NewCommand(factum.NamedAggregate{Context: "shop", Aggregate: "cart"}.WithID("c-1"), struct{}{})
	for name, err := range map[string]error{"send": d.Send(ctx, cmd), "second shutdown": d.Shutdown(ctx)} {
		if !errors.Is(err, factum.ErrClosed) || !errors.Is(err, command.ErrClosed) {
			t.Errorf("%s: %v, want an error matching factum.ErrClosed", name, err)
		}
	}
	if err := d.Send(ctx, cmd); factum.CodeOf(err) != factum.CodeTooManyRequests {
		t.Errorf("send after shutdown: code %s, want TooManyRequests", factum.CodeOf(err))
	}
}
