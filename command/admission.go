package command

import (
	"context"

	"github.com/factum-go/factum"
)

type internalKey struct{}

// Internal marks ctx as carrying a command sent by the application's own
// event functions (a saga reacting to an event), not by a client. A closed
// gateway still admits such commands, so that the work already appended
// can run to its end during a shutdown.
func Internal(ctx context.Context) context.Context {
	return context.WithValue(ctx, internalKey{}, true)
}

func isInternal(ctx context.Context) bool {
	v, _ := ctx.Value(internalKey{}).(bool)
	return v
}

// Close ends the admission of commands from clients: from then on Send,
// SendAndWait and SendAndWaitStream fail with TooManyRequests wrapping
// ErrClosed, except for commands whose context is marked Internal. It is
// the first step of a runtime's shutdown; the bus stops later.
func (g *Gateway) Close() { g.closed.Store(true) }

// admit refuses a command whose caller has already given up (its context
// is done: nothing is sent, so nothing can happen behind its back) and a
// client's command once the gateway is closed. A command it admits is
// counted until the caller hands it to the bus (or gives it up), so that
// Settled cannot miss one admitted just before Close.
func (g *Gateway) admit(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	g.admitted.Add(1) // before the check: Close then either refuses it or sees it
	if g.closed.Load() && !isInternal(ctx) {
		g.admitted.Add(-1)
		return factum.Errorf(factum.CodeTooManyRequests, "%w: not accepting commands", ErrClosed)
	}
	return nil
}

// Settled reports whether no admitted command is still on its way to the
// bus: after Close, once it holds, every client command has been handed
// over or refused.
func (g *Gateway) Settled() bool { return g.admitted.Load() == 0 }
