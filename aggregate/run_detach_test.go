package aggregate_test

import (
	"context"
	"testing"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/aggregate"
)

// detaching runs take_tally commands in a context of their own, as a
// middleware detaching a command from its caller's context does.
func detaching(_ factum.NamedAggregate, next aggregate.CommandFunc) aggregate.CommandFunc {
	return func(ctx context.Context, cmd *factum.Command) factum.Signal {
		if cmd.Name == factum.NameOf(takeTally{}) {
			return next(context.Background(), cmd)
		}
		return next(ctx, cmd)
	}
}

// A command whose middleware calls the rest of the chain in a context
// without the run's values keeps its place in the run: it decides on the
// state the commands before it leave, as one at a time.
func TestRunDetachedContextKeepsOrder(t *testing.T) {
	tw := newTwins(t, detaching)
	tw.run(t, []*factum.Command{tallyCmd("t", openTally{})})
	cmds := []*factum.Command{
		tallyCmd("t", addTally{Qty: 5}), tallyCmd("t", takeTally{Qty: 5}),
		tallyCmd("t", addTally{Qty: 2}), tallyCmd("t", takeTally{Qty: 2}), tallyCmd("t", takeTally{Qty: 1}),
	}
	tw.run(t, cmds)
	tw.same(t, "t", cmds)
}
