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
	runs, one := newWorld(t, newGroupStore(), 0, detaching), newWorld(t, newGroupStore(), 1, detaching)
	t.Cleanup(func() { runs.shutdown(t); one.shutdown(t) })
	open := []*factum.Command{tallyCmd("t", openTally{})}
	runs.run(t, clones(open))
	one.run(t, clones(open))
	cmds := []*factum.Command{
		tallyCmd("t", addTally{Qty: 5}), tallyCmd("t", takeTally{Qty: 5}),
		tallyCmd("t", addTally{Qty: 2}), tallyCmd("t", takeTally{Qty: 2}), tallyCmd("t", takeTally{Qty: 1}),
	}
	runs.run(t, clones(cmds))
	one.run(t, clones(cmds))
	for i, c := range cmds {
		got, n := runs.signal(c.ID)
		want, _ := one.signal(c.ID)
		if n != 1 || got.Code != want.Code || got.AggregateVersion != want.AggregateVersion {
			t.Errorf("command %d: with runs %d signals, %s v%d (%s); one at a time %s v%d (%s)",
				i, n, got.Code, got.AggregateVersion, got.Message, want.Code, want.AggregateVersion, want.Message)
		}
	}
	if got, want := len(runs.streams(t, tallyID("t"))), len(one.streams(t, tallyID("t"))); got != want {
		t.Errorf("with runs %d streams stored, one at a time %d", got, want)
	}
}
