package engine_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/command"
	"github.com/factum-go/factum/engine"
	"github.com/factum-go/factum/event"
	"github.com/factum-go/factum/eventstore"
	"github.com/factum-go/factum/saga"
)

var counters = factum.NamedAggregate{Context: "test", Aggregate: "counter"}

// totals is a projection of counter totals.
type totals struct {
	mu sync.Mutex
	m  map[string]int
}

func (p *totals) get(id string) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.m[id]
}

func (p *totals) processor(t testing.TB, name string, fail func(Added) error) *event.Processor {
	t.Helper()
	p.m = map[string]int{}
	return event.MustProcessor("test", name, factum.StageProjected,
		event.On(func(ctx context.Context, m event.Message, e Added) error {
			if fail != nil {
				if err := fail(e); err != nil {
					return err
				}
			}
			p.mu.Lock()
			p.m[m.Stream.AggregateID.ID] += e.N
			p.mu.Unlock()
			return nil
		}))
}

func TestProjectedWaitIsReadAfterWrite(t *testing.T) {
	proj := &totals{}
	other := &totals{}
	rt, _ := newRuntime(t, engine.Config{Processors: []*event.Processor{
		proj.processor(t, "totals", nil),
		other.processor(t, "other_totals", nil),
	}}, nil)
	ctx := context.Background()
	id := counters.WithID("c-1")
	want := 0
	for i := 1; i <= 200; i++ {
		want += i
		// Without a target: every consumer of Added must have signalled.
		res, err := rt.Gateway().SendAndWait(ctx, factum.NewCommand(id, Add{N: i}), command.Wait(factum.StageProjected))
		if err != nil {
			t.Fatalf("command %d: %v", i, err)
		}
		if res.Stage != factum.StageProjected || res.AggregateVersion != i {
			t.Fatalf("result = %+v", res)
		}
		if got, got2 := proj.get("c-1"), other.get("c-1"); got != want || got2 != want {
			t.Fatalf("after PROJECTED of command %d projections hold %d and %d, want %d", i, got, got2, want)
		}
	}
	// With a target: only that function must have signalled.
	target := factum.Function{Processor: "totals"}
	res, err := rt.Gateway().SendAndWait(ctx, factum.NewCommand(id, Add{N: 1}), command.Wait(factum.StageProjected).For(target))
	if err != nil {
		t.Fatal(err)
	}
	if res.Function.Processor != "totals" || proj.get("c-1") != want+1 {
		t.Fatalf("targeted wait: %+v, projection %d", res, proj.get("c-1"))
	}
}

func TestProjectedWaitWithoutConsumersCompletesAtOnce(t *testing.T) {
	proj := &totals{}
	rt, _ := newRuntime(t, engine.Config{Processors: []*event.Processor{proj.processor(t, "totals", nil)}}, nil)
	// Open emits Opened, which no function consumes.
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	res, err := rt.Gateway().SendAndWait(ctx, factum.NewCommand(counters.WithID("c-2"), Open{}),
		command.Wait(factum.StageProjected).Within(time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	if res.Note == "" {
		t.Fatalf("a wait completed by the gateway carries no note: %+v", res)
	}
}

func TestFailingProjectionFailsTheWaiter(t *testing.T) {
	proj := &totals{}
	boom := errors.New("read model unavailable")
	var calls atomic.Int32
	var recorded atomic.Int32
	rt, _ := newRuntime(t, engine.Config{
		Processors: []*event.Processor{proj.processor(t, "totals", func(e Added) error {
			calls.Add(1)
			if e.N == 13 {
				return boom
			}
			return nil
		})},
		Events: event.Config{Attempts: 2, Backoff: time.Millisecond},
		Failures: event.FailureRecorderFunc(func(ctx context.Context, f event.Failure) error {
			recorded.Add(1)
			return nil
		}),
	}, nil)
	ctx := context.Background()
	id := counters.WithID("c-3")
	res, err := rt.Gateway().SendAndWait(ctx, factum.NewCommand(id, Add{N: 13}), command.Wait(factum.StageProjected))
	if err == nil {
		t.Fatalf("PROJECTED succeeded for a failing projection: %+v", res)
	}
	var re *command.ResultError
	if !errors.As(err, &re) || re.Result.Stage != factum.StageProjected || re.Result.Function.Processor != "totals" {
		t.Fatalf("error = %v, want a PROJECTED failure of totals", err)
	}
	if recorded.Load() != 1 || calls.Load() != 2 {
		t.Fatalf("recorded %d failures after %d calls, want 1 after 2", recorded.Load(), calls.Load())
	}
	// PROCESSED stayed successful: the stream is in the store.
	look, err := rt.Gateway().Lookup(ctx, id, res.RequestID)
	if err != nil || look.AggregateVersion != 1 {
		t.Fatalf("lookup after a failed projection = %+v, %v", look, err)
	}
	// The consumer moved on.
	if _, err := rt.Gateway().SendAndWait(ctx, factum.NewCommand(id, Add{N: 1}), command.Wait(factum.StageProjected)); err != nil {
		t.Fatalf("next command: %v", err)
	}
}

// A saga that adds to a mirror counter whenever a counter is added to.
func mirrorSaga() *saga.Saga {
	return saga.New("test", "mirror", saga.On(func(ctx context.Context, m event.Message, e Added) ([]factum.Command, error) {
		if m.Stream.AggregateID.ID == "mirror" || e.N == 0 {
			return nil, nil
		}
		return []factum.Command{factum.NewCommand(counters.WithID("mirror"), Add(e))}, nil
	}))
}

func TestSagaSendsOnceEvenWhenRedelivered(t *testing.T) {
	store := eventstore.NewMemory()
	rt, _ := newRuntime(t, engine.Config{Store: store, Sagas: []*saga.Saga{mirrorSaga()}}, nil)
	ctx := context.Background()
	res, err := rt.Gateway().SendAndWait(ctx, factum.NewCommand(counters.WithID("src"), Add{N: 5}), command.Wait(factum.StageSagaHandled))
	if err != nil {
		t.Fatal(err)
	}
	ids, _ := res.Results[saga.ResultCommandIDs].([]string)
	if len(ids) != 1 {
		t.Fatalf("SAGA_HANDLED result = %+v, want one command ID", res.Results)
	}
	// Deliver the same stream to the saga again, as a redelivery would.
	streams, err := store.Load(ctx, counters.WithID("src"), 1, 1)
	if err != nil || len(streams) != 1 {
		t.Fatal(streams, err)
	}
	h, ok := rt.Functions().Function(factum.Function{Context: "test", Processor: "mirror", Name: "on_added"})
	if !ok {
		t.Fatal("saga function not registered")
	}
	for range 3 {
		if err := event.Invoke(ctx, h, &streams[0], time.Minute); err != nil {
			t.Fatalf("redelivery: %v", err)
		}
	}
	// Wait until the mirror has processed whatever was sent.
	deadline := time.Now().Add(5 * time.Second)
	for {
		mirror, err := store.Load(ctx, counters.WithID("mirror"), 1, eventstore.MaxVersion)
		if err != nil {
			t.Fatal(err)
		}
		if len(mirror) == 1 {
			time.Sleep(20 * time.Millisecond)
			mirror, _ = store.Load(ctx, counters.WithID("mirror"), 1, eventstore.MaxVersion)
			if len(mirror) != 1 {
				t.Fatalf("redelivered event created %d streams on the target", len(mirror))
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("mirror has %d streams", len(mirror))
		}
		time.Sleep(time.Millisecond)
	}
}

func TestShutdownDrainsConsumers(t *testing.T) {
	proj := &totals{}
	rt, err := engine.New(engine.Config{Store: eventstore.NewMemory(), Processors: []*event.Processor{proj.processor(t, "totals", nil)}}, counterType(nil))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := rt.Start(ctx); err != nil {
		t.Fatal(err)
	}
	for range 300 {
		if _, err := rt.Gateway().Send(ctx, factum.NewCommand(counters.WithID("d"), Add{N: 1})); err != nil {
			t.Fatal(err)
		}
	}
	sctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := rt.Shutdown(sctx); err != nil {
		t.Fatal(err)
	}
	if got := proj.get("d"); got != 300 {
		t.Fatalf("after shutdown the projection holds %d, want 300", got)
	}
}
