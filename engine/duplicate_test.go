package engine_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/command"
	"github.com/factum-go/factum/engine"
	"github.com/factum-go/factum/event"
	"github.com/factum-go/factum/eventstore"
	"github.com/factum-go/factum/snapshot"
)

// blockedSaves holds every snapshot save until released.
type blockedSaves struct {
	*snapshot.Memory
	once    sync.Once
	entered chan struct{}
	release chan struct{}
}

func (b *blockedSaves) Save(ctx context.Context, s snapshot.Snapshot) (bool, error) {
	b.once.Do(func() { close(b.entered) })
	select {
	case <-b.release:
	case <-ctx.Done():
		return false, ctx.Err()
	}
	return b.Memory.Save(ctx, s)
}

// A retried request that asks for SNAPSHOT waits for the snapshot of its
// first attempt's stream, instead of answering at PROCESSED: its caller's
// read-after-write holds on the retry.
// Both ways a duplicate is found are covered: the gateway's pre-check, and
// the processor's append (pre-check off).
func TestDuplicateWaitsForTheSnapshot(t *testing.T) {
	for _, precheck := range []bool{true, false} {
		name := "found by the pre-check"
		if !precheck {
			name = "found by the append"
		}
		t.Run(name, func(t *testing.T) { duplicateWaitsForTheSnapshot(t, !precheck) })
	}
}

func duplicateWaitsForTheSnapshot(t *testing.T, noPrecheck bool) {
	snaps := &blockedSaves{Memory: snapshot.NewMemory(), entered: make(chan struct{}), release: make(chan struct{})}
	rt, def := newRuntime(t, engine.Config{SnapshotStore: snaps, DisablePrecheck: noPrecheck}, nil)
	t.Cleanup(func() {
		select {
		case <-snaps.release:
		default:
			close(snaps.release)
		}
	})
	ctx := context.Background()
	id := def.ID("c-1")
	cmd := factum.NewCommand(id, Add{N: 1}).WithRequestID("req-1")
	_, err := rt.Gateway().SendAndWait(ctx, cmd, command.Wait(factum.StageSnapshot).Within(50*time.Millisecond))
	mustCode(t, err, factum.CodeRequestTimeout)
	<-snaps.entered

	type answer struct {
		res command.Result
		err error
	}
	retried := make(chan answer, 1)
	go func() {
		r, err := rt.Gateway().SendAndWait(ctx, factum.NewCommand(id, Add{N: 1}).WithRequestID("req-1"), command.Wait(factum.StageSnapshot).Within(20*time.Second))
		retried <- answer{r, err}
	}()
	var a answer
	select {
	case a = <-retried: // answered while the save was still held
	case <-time.After(200 * time.Millisecond):
		close(snaps.release)
		a = <-retried
	}
	if a.err != nil || a.res.Stage != factum.StageSnapshot || !a.res.Duplicate {
		t.Fatalf("retry = %+v, %v; want SNAPSHOT, duplicate", a.res, a.err)
	}
	s, err := snaps.Memory.Load(ctx, id)
	if err != nil || s.Version < a.res.AggregateVersion {
		t.Fatalf("when the retry answered, the snapshot was %+v, %v; want version ≥ %d", s, err, a.res.AggregateVersion)
	}
}

// A retried request that asks for a branch stage learns of its first
// attempt's failure there.
func TestDuplicateSeesTheFirstAttemptsFailure(t *testing.T) {
	fail := event.MustProcessor("test", "broken", factum.StageProjected,
		event.OnStream("on_added", func(context.Context, *factum.EventStream) error {
			return factum.IllegalState("projection refused")
		}, []string{"added"}))
	rt, def := newRuntime(t, engine.Config{Processors: []*event.Processor{fail}, Events: event.Config{Attempts: 1}}, nil)
	ctx := context.Background()
	cmd := factum.NewCommand(def.ID("c-1"), Add{N: 1}).WithRequestID("req-1")
	plan := command.Wait(factum.StageProjected).Within(10 * time.Second)
	if _, err := rt.Gateway().SendAndWait(ctx, cmd, plan); factum.CodeOf(err) != factum.CodeIllegalState {
		t.Fatalf("first attempt: %v", err)
	}
	res, err := rt.Gateway().SendAndWait(ctx, factum.NewCommand(def.ID("c-1"), Add{N: 1}).WithRequestID("req-1"), plan)
	if factum.CodeOf(err) != factum.CodeIllegalState || !res.Duplicate || res.Stage != factum.StageProjected {
		t.Fatalf("retry = %+v, %v", res, err)
	}
}

// finder records failures and finds them again, as compensation does.
type finder struct {
	mu  sync.Mutex
	got map[string]error // stream ID -> failure
}

func (f *finder) RecordFailure(_ context.Context, fl event.Failure) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.got[fl.Stream.ID] = fl.Err
	return nil
}

func (f *finder) FindFailure(_ context.Context, _ factum.Function, s *factum.EventStream) (error, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.got[s.ID], nil
}

// After a restart the consumer no longer remembers the first attempt's
// failure; the recorder's records tell the retried request.
func TestDuplicateSeesARecordedFailureAfterARestart(t *testing.T) {
	store, checkpoints := eventstore.NewMemory(), event.NewMemoryCheckpoints()
	rec := &finder{got: map[string]error{}}
	newProcessor := func() *event.Processor {
		return event.MustProcessor("test", "broken", factum.StageProjected,
			event.OnStream("on_added", func(context.Context, *factum.EventStream) error {
				return factum.IllegalState("projection refused")
			}, []string{"added"}))
	}
	cfg := engine.Config{Store: store, Checkpoints: checkpoints, Failures: rec, Events: event.Config{Attempts: 1}}
	cfg.Processors = []*event.Processor{newProcessor()}
	first, def := newRuntime(t, cfg, nil)
	ctx := context.Background()
	plan := command.Wait(factum.StageProjected).Within(10 * time.Second)
	if _, err := first.Gateway().SendAndWait(ctx, factum.NewCommand(def.ID("c-1"), Add{N: 1}).WithRequestID("req-1"), plan); factum.CodeOf(err) != factum.CodeIllegalState {
		t.Fatalf("first attempt: %v", err)
	}
	if err := first.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	cfg.Processors = []*event.Processor{newProcessor()}
	second, _ := newRuntime(t, cfg, nil)
	res, err := second.Gateway().SendAndWait(ctx, factum.NewCommand(def.ID("c-1"), Add{N: 1}).WithRequestID("req-1"), plan)
	if factum.CodeOf(err) != factum.CodeIllegalState || !res.Duplicate {
		t.Fatalf("retry after restart = %+v, %v", res, err)
	}
}
