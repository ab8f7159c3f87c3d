package nats

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/aggregate"
	"github.com/factum-go/factum/command"
	"github.com/factum-go/factum/engine"
	natsgo "github.com/nats-io/nats.go"
)

// overlap is a per-aggregate concurrency probe across instances: it
// records every command's processing and fails the test when one
// aggregate is processed by two commands at once. block, if set, runs
// inside the processing with the command's context: a handler that takes
// its time.
type overlap struct {
	mu    sync.Mutex
	busy  map[string]string         // aggregate ID -> instance processing it
	by    map[string]map[string]int // request ID -> instance -> times
	errs  []string
	block func(ctx context.Context, instance string, cmd *factum.Command) error
	delay time.Duration // widens every window a second writer could use
}

func newOverlap() *overlap {
	return &overlap{busy: map[string]string{}, by: map[string]map[string]int{}}
}

func (o *overlap) middleware(instance string) aggregate.Middleware {
	return func(_ factum.NamedAggregate, next aggregate.CommandFunc) aggregate.CommandFunc {
		return func(ctx context.Context, cmd *factum.Command) factum.Signal {
			id, req := cmd.AggregateID.ID, cmd.RequestIDOrID()
			o.mu.Lock()
			if other, ok := o.busy[id]; ok {
				o.errs = append(o.errs, fmt.Sprintf("aggregate %s: %s processed on %s while %s processes it", id, req, instance, other))
			}
			o.busy[id] = instance
			if o.by[req] == nil {
				o.by[req] = map[string]int{}
			}
			o.by[req][instance]++
			block, delay := o.block, o.delay
			o.mu.Unlock()
			defer func() {
				o.mu.Lock()
				if o.busy[id] == instance {
					delete(o.busy, id)
				}
				o.mu.Unlock()
			}()
			if block != nil {
				if err := block(ctx, instance, cmd); err != nil {
					return factum.Signal{CommandID: cmd.ID, RequestID: req, Stage: factum.StageProcessed, AggregateID: cmd.AggregateID,
						Code: factum.CodeOf(err), Message: err.Error(), SignalTime: time.Now()}
				}
			}
			if delay > 0 {
				time.Sleep(delay)
			}
			return next(ctx, cmd)
		}
	}
}

func (o *overlap) times(req, instance string) int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.by[req][instance]
}

func (o *overlap) check(t testing.TB) {
	t.Helper()
	o.mu.Lock()
	defer o.mu.Unlock()
	for _, e := range o.errs {
		t.Error(e)
	}
}

// startProbed starts an instance of the fleet as fleet.start does, with
// the overlap probe around its executor.
func (f *fleet) startProbed(name string, o *overlap) *engine.Engine {
	f.t.Helper()
	return f.startOn(name, o, f.w.url, BusConfig{})
}

// startOn starts an instance with the overlap probe, connected to url
// with opts beside the usual ones, its bus configured by cfg (the fleet's
// local mode and 16 lanes filled in), its command stream and lease bucket
// made with cfg.Replicas if they do not exist.
func (f *fleet) startOn(name string, o *overlap, url string, cfg BusConfig, opts ...natsgo.Option) *engine.Engine {
	t := f.t
	t.Helper()
	cfg.Local, cfg.Lanes = f.local, 16
	n := f.w.nodeAt(t, name, url, max(cfg.Replicas, 1), cfg, opts...)
	e, err := engine.New(engine.Config{
		Store: f.store, Bus: n.newBus, CommandMiddleware: []aggregate.Middleware{o.middleware(name)},
		Signals: func(local command.Sink) (command.Sink, error) {
			f.router.mu.Lock()
			f.router.sinks[name] = local
			f.router.mu.Unlock()
			return routedSink{r: f.router, local: local}, nil
		},
	}, tallyType(f.w.context))
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.stop(name) })
	f.mu.Lock()
	f.engines[name], f.nodes[name] = e, n
	f.order = append(f.order, name)
	f.mu.Unlock()
	return e
}

// idIn returns an aggregate ID of partition n among count.
func idIn(n, count int) string {
	for i := 0; ; i++ {
		if id := fmt.Sprintf("tally-%d", i); PartitionOf(id, count) == n {
			return id
		}
	}
}

// A command still running on an instance when its partition changes hands
// never overlaps the next owner's commands of its aggregate: giving a
// partition up (rebalancing) cancels the context of the commands running
// on it and deletes the lease only once they ended, and a claim that
// cannot be renewed cancels them when its validity ends, before anyone
// can take it. The blocked command is left unacknowledged, so the next
// owner processes it; each command is stored once, without a version
// conflict. On the old code a give-up waited a tenth of the lease for the
// running command and then deleted the lease, and a lapse cancelled
// nothing: the next owner ran the aggregate's commands beside it.
func TestAPartitionChangesHandsOnlyAfterItsCommandsEnded(t *testing.T) {
	const lease = 2 * time.Second
	for _, tc := range []struct {
		name string
		// honour: the blocked handler returns when its context ends;
		// otherwise only when the test lets it.
		honour bool
		// cut: the holder loses NATS (its renewals fail) instead of
		// giving the partition up to a newcomer.
		cut bool
	}{
		{name: "given up, the handler stops on its context", honour: true},
		{name: "given up, the handler ignores its context"},
		{name: "lapsed, the handler stops on its context", honour: true, cut: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFleet(t, inProcessWorld(t, 2, lease), LocalNever)
			o := newOverlap()
			id := idIn(1, 2) // partition 1: the one a gives up to b
			entered := make(chan struct{})
			release := make(chan struct{})
			var releaseOnce sync.Once
			free := func() { releaseOnce.Do(func() { close(release) }) }
			t.Cleanup(free)
			o.block = func(ctx context.Context, instance string, cmd *factum.Command) error {
				if instance != "a" || cmd.RequestID != "blocker" {
					return nil
				}
				close(entered)
				if !tc.honour {
					<-release
					return nil
				}
				select {
				case <-ctx.Done():
					return fmt.Errorf("the handler gave up: %w", ctx.Err())
				case <-release:
					return nil
				}
			}
			a := f.startProbed("a", o)
			f.balanced()
			for _, req := range []string{"blocker", "next"} {
				if _, err := a.Gateway().Send(context.Background(), tallyCommand(id, req)); err != nil {
					t.Fatal(err)
				}
				if req == "blocker" {
					<-entered
				}
			}
			if tc.cut {
				f.crash("a")
				// b starts once a no longer owns the partition: a must
				// have stopped by itself, with no one to hand over to.
				waitFor(t, 30*time.Second, "a's lease to lapse", func() bool {
					_, ok := f.nodes["a"].parts.Owns(1)
					return !ok
				})
				f.startProbed("b", o)
			} else {
				f.startProbed("b", o)
				waitFor(t, 30*time.Second, "a to give partition 1 up", func() bool {
					_, ok := f.nodes["a"].parts.Owns(1)
					return !ok
				})
				if !tc.honour {
					// The window in which the old code let b take the
					// partition beside the running command.
					time.Sleep(lease / 2)
					free()
				}
			}
			waitFor(t, 60*time.Second, "b to process the aggregate's commands", func() bool {
				return o.times("next", "b") == 1
			})
			free()
			o.check(t)
			f.checkStored(map[string][]string{id: {"blocker", "next"}})
			if c := f.store.conflicts.Load(); c != 0 {
				t.Errorf("%d version conflicts: the event store's check, not the fencing, stopped a second writer", c)
			}
		})
	}
}
