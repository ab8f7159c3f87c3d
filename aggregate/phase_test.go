package aggregate_test

import (
	"context"
	"slices"
	"testing"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/aggregate"
	"github.com/factum-go/factum/codec"
	"github.com/factum-go/factum/eventstore"
)

type phaseKey struct{}

// phases records what a PhaseObserver hears: each phase's start and end
// (with its error's code), and that the phase runs in the context
// StartPhase returned.
type phases struct {
	log []string
}

func (p *phases) ObserveCache(hit bool) {
	if hit {
		p.log = append(p.log, "hit")
	} else {
		p.log = append(p.log, "miss")
	}
}

func (p *phases) StartPhase(ctx context.Context, ph aggregate.Phase) context.Context {
	p.log = append(p.log, "start "+ph.String())
	return context.WithValue(ctx, phaseKey{}, ph)
}

func (p *phases) EndPhase(ctx context.Context, ph aggregate.Phase, err error) {
	entry := "end " + ph.String()
	if got, _ := ctx.Value(phaseKey{}).(aggregate.Phase); got != ph {
		entry += " in a context not its own"
	}
	if err != nil {
		entry += " " + string(factum.CodeOf(err))
	}
	p.log = append(p.log, entry)
}

// An executor tells a PhaseObserver in the command's context of each
// phase of each attempt, in order: a new aggregate is loaded, a cached one
// is not; effects are a phase only when the handler binds some; a failed
// append ends with its error, and the retry's phases follow.
func TestThePhaseObserverHearsEveryPhase(t *testing.T) {
	conflict := factum.NewError(factum.CodeEventVersionConflict, "injected conflict")
	for _, tc := range []struct {
		name    string
		effects bool
		fail    func(int) (error, bool)
		want    []string
	}{
		{"a new aggregate, then cached", false, nil, []string{
			"miss", "start load", "end load", "start decide", "end decide", "start append", "end append",
			"hit", "start decide", "end decide", "start append", "end append",
		}},
		{"effects", true, nil, []string{
			"miss", "start load", "end load", "start decide", "end decide", "start effects", "end effects", "start append", "end append",
			"hit", "start decide", "end decide", "start effects", "end effects", "start append", "end append",
		}},
		{"a conflict retried", false, func(n int) (error, bool) {
			if n == 2 {
				return conflict, false
			}
			return nil, false
		}, []string{
			"miss", "start load", "end load", "start decide", "end decide", "start append", "end append",
			"hit", "start decide", "end decide", "start append", "end append EventVersionConflict",
			"miss", "start load", "end load", "start decide", "end decide", "start append", "end append",
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			def := bound(func() []aggregate.Effect {
				if tc.effects {
					return []aggregate.Effect{&recorder{}}
				}
				return nil
			})
			store := &faultyStore{Store: eventstore.NewMemory(), fail: tc.fail}
			exec, err := def.NewExecutor(aggregate.ExecutorConfig{Store: store, Codec: codec.NewRegistry(), Backoff: 1})
			if err != nil {
				t.Fatal(err)
			}
			obs := &phases{}
			ctx := aggregate.WithCacheObserver(context.Background(), obs)
			for range 2 {
				cmd := factum.NewCommand(def.ID("b-1").WithTenant(factum.DefaultTenant), reserve{})
				cmd.AllowCreate = true
				if sig := exec.Process(ctx, &cmd); !sig.Succeeded() {
					t.Fatalf("%+v", sig)
				}
			}
			if !slices.Equal(obs.log, tc.want) {
				t.Fatalf("heard\n %q\nwant\n %q", obs.log, tc.want)
			}
		})
	}
	if s := aggregate.Phase(0).String(); s != "unknown" {
		t.Errorf("the zero phase is %q", s)
	}
}
