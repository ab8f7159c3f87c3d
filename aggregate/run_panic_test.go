package aggregate_test

import (
	"context"
	"testing"
	"time"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/aggregate"
	"github.com/factum-go/factum/internal/built"
)

// A run holding one command twice (the same pointer: a sender sending
// its command again) answers as one at a time: the first Ok, the second
// a duplicate of it, even when a middleware detaches the command's
// context, so that its attempt finds its run member by the command.
func TestRunSamePointerTwiceDetached(t *testing.T) {
	// A long grace: the group waits for the run's second command to
	// arrive, whatever the machine's scheduling.
	aggregate.SetArrivalGrace(t, 10*time.Second)
	store := newGroupStore()
	p := tallyExecutor(t, aggregate.ExecutorConfig{Store: store, Middleware: []aggregate.Middleware{detaching}, Backoff: time.Microsecond})
	mustOpenTally(t, p, "twice")
	ctx := context.Background()
	c := tallyCmd("twice", takeTally{Qty: 0})
	got := make([]factum.Signal, 2)
	p.ProcessRun(ctx, []*factum.Command{c, c}, nil, func(i int, sig factum.Signal) { got[i] = sig })
	if got[0].Code != factum.CodeOk || got[0].Duplicate || got[0].AggregateVersion != 2 {
		t.Errorf("first: %s v%d dup=%v (%s), want Ok v2, not a duplicate", got[0].Code, got[0].AggregateVersion, got[0].Duplicate, got[0].Message)
	}
	if got[1].Code != factum.CodeOk || got[1].Duplicate || got[1].AggregateVersion != 2 {
		t.Errorf("second: %s v%d dup=%v (%s), want Ok v2 as one at a time (a replay of one command)", got[1].Code, got[1].AggregateVersion, got[1].Duplicate, got[1].Message)
	}
}

// panickingGroups is a group store whose group appends panic, as a
// faulty store decorator's might.
type panickingGroups struct{ *groupStore }

func (s *panickingGroups) BuiltOwner() built.Owner { return built.OwnedBy(s) }

func (s *panickingGroups) AppendBuiltGroup(context.Context, []built.Stream) error {
	panic("the store's group append panicked")
}

// One at a time, a store's panic in an append is the default Recover's
// to answer: the command fails, the lane goes on. In a run, the group
// whose last member a middleware answered itself is committed outside
// every chain (runMember.process): the panic escapes ProcessRun and
// takes the lane's goroutine down.
func TestRunStorePanicIsRecovered(t *testing.T) {
	aggregate.SetArrivalGrace(t, 10*time.Second)
	p := tallyExecutor(t, aggregate.ExecutorConfig{Store: &panickingGroups{newGroupStore()},
		Middleware: []aggregate.Middleware{skipping}, Backoff: time.Microsecond})
	mustOpenTally(t, p, "p")
	ctx := context.Background()
	cmds := []*factum.Command{tallyCmd("p", addTally{Qty: 1}), tallyCmd("p", skipTally{})}
	got := make([]factum.Signal, len(cmds))
	var escaped any
	func() {
		defer func() { escaped = recover() }()
		p.ProcessRun(ctx, cmds, nil, func(i int, sig factum.Signal) { got[i] = sig })
	}()
	if escaped != nil {
		t.Fatalf("a store panic escaped ProcessRun: %v", escaped)
	}
	for i, sig := range got {
		if sig.CommandID != cmds[i].ID {
			t.Errorf("command %d: no signal", i)
		}
	}
}

// panickingAppends is a group store whose single appends panic.
type panickingAppends struct{ *groupStore }

func (s *panickingAppends) BuiltOwner() built.Owner { return built.OwnedBy(s) }

func (s *panickingAppends) AppendBuilt(context.Context, built.Stream) error {
	panic("the store's append panicked")
}

// The baseline of TestRunStorePanicIsRecovered: one at a time, the
// default Recover answers a store's panic.
func TestOneStorePanicIsRecovered(t *testing.T) {
	store := &panickingAppends{newGroupStore()}
	p := tallyExecutor(t, aggregate.ExecutorConfig{Store: store, Backoff: time.Microsecond})
	var escaped any
	var sig factum.Signal
	func() {
		defer func() { escaped = recover() }()
		sig = p.Process(context.Background(), tallyCmd("q", openTally{}))
	}()
	if escaped != nil || sig.Code == factum.CodeOk {
		t.Fatalf("one at a time: escaped %v, signal %s", escaped, sig.Code)
	}
}
