package engine_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/command"
	"github.com/factum-go/factum/engine"
	"github.com/factum-go/factum/eventstore"
)

// 1,000 commands to one aggregate from 32 goroutines: versions 1..1,000
// with no gap, and a state that reflects every command.
func TestOneAggregateManyGoroutines(t *testing.T) {
	store := eventstore.NewMemory()
	rt, def := newRuntime(t, engine.Config{Store: store}, nil)
	gw := rt.Gateway()
	id := def.ID("hot")
	const goroutines, perG = 32, 1000 / 32
	total := goroutines * perG
	if rest := 1000 - total; rest > 0 {
		total += rest
	}
	versions := make(chan int, 1000)
	var wg sync.WaitGroup
	for g := range goroutines {
		n := perG
		if g == 0 {
			n += 1000 - goroutines*perG
		}
		wg.Go(func() {
			for range n {
				r, err := gw.SendAndWait(context.Background(), factum.NewCommand(id, Add{N: 2}), processed())
				if err != nil {
					t.Error(err)
					return
				}
				versions <- r.AggregateVersion
			}
		})
	}
	wg.Wait()
	close(versions)
	var got []int
	for v := range versions {
		got = append(got, v)
	}
	slices.Sort(got)
	if len(got) != 1000 {
		t.Fatalf("%d results, want 1000", len(got))
	}
	for i, v := range got {
		if v != i+1 {
			t.Fatalf("versions have a gap or repeat at %d: %d", i+1, v)
		}
	}
	streams, err := store.Load(context.Background(), id, 1, eventstore.MaxVersion)
	if err != nil {
		t.Fatal(err)
	}
	if len(streams) != 1000 || streams[999].Version != 1000 {
		t.Fatalf("store holds %d streams", len(streams))
	}
	// A fresh runtime rebuilds the state from the store: every command is in it.
	rt2, _ := newRuntime(t, engine.Config{Store: store}, nil)
	r, err := rt2.Gateway().SendAndWait(context.Background(), factum.NewCommand(id, Add{N: 0}), processed())
	if err != nil || r.AggregateVersion != 1001 {
		t.Fatalf("after reload: %+v, %v", r, err)
	}
	st, err := def.Fold(rt.Codec(), zeroStored(id), streams)
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"Total":2000,"Adds":1000}`; string(st.State) != want {
		t.Fatalf("state = %s, want %s", st.State, want)
	}
}

// 64 concurrent sends of one request ID: exactly one stream, every caller
// sees its version. Run with and without the bloom pre-check, so that both
// the pre-check path and the append's DuplicateRequestId path are covered.
func TestConcurrentSameRequestID(t *testing.T) {
	for _, tc := range []struct {
		name     string
		disabled bool
	}{{"precheck", false}, {"append-only", true}} {
		t.Run(tc.name, func(t *testing.T) {
			store := eventstore.NewMemory()
			rt, def := newRuntime(t, engine.Config{Store: store, DisablePrecheck: tc.disabled}, nil)
			gw := rt.Gateway()
			id := def.ID("dup")
			// The aggregate exists at version 3 first.
			for range 3 {
				if _, err := gw.SendAndWait(context.Background(), factum.NewCommand(id, Add{N: 1}), processed()); err != nil {
					t.Fatal(err)
				}
			}
			const n = 64
			results := make([]command.Result, n)
			var wg sync.WaitGroup
			start := make(chan struct{})
			for i := range n {
				wg.Go(func() {
					<-start
					cmd := factum.NewCommand(id, Add{N: 10}).WithRequestID("req-same")
					r, err := gw.SendAndWait(context.Background(), cmd, processed())
					if err != nil {
						t.Errorf("caller %d: %v", i, err)
					}
					results[i] = r
				})
			}
			close(start)
			wg.Wait()
			dups := 0
			for i, r := range results {
				if r.AggregateVersion != 4 || r.Stage != factum.StageProcessed || !r.Succeeded() {
					t.Fatalf("caller %d: %+v, want PROCESSED at version 4", i, r)
				}
				if r.Duplicate {
					dups++
				}
			}
			if dups != n-1 {
				t.Errorf("%d results marked Duplicate, want %d", dups, n-1)
			}
			streams, _ := store.Load(context.Background(), id, 1, eventstore.MaxVersion)
			if len(streams) != 4 {
				t.Fatalf("%d streams, want 4 (exactly one for the request)", len(streams))
			}
		})
	}
}

// A stale expected version: CommandExpectVersionConflict, nothing appended.
func TestStaleExpectedVersion(t *testing.T) {
	store := eventstore.NewMemory()
	rt, def := newRuntime(t, engine.Config{Store: store}, nil)
	gw := rt.Gateway()
	id := def.ID("stale")
	for range 2 {
		if _, err := gw.SendAndWait(context.Background(), factum.NewCommand(id, Add{N: 1}), processed()); err != nil {
			t.Fatal(err)
		}
	}
	r, err := gw.SendAndWait(context.Background(), factum.NewCommand(id, Add{N: 1}).WithExpectedVersion(1), processed())
	mustCode(t, err, factum.CodeCommandExpectVersionConflict)
	if !errors.Is(err, factum.ErrCommandExpectVersionConflict) || r.Stage != factum.StageProcessed {
		t.Fatalf("result %+v", r)
	}
	var re *command.ResultError
	if !errors.As(err, &re) || re.Result.Code != factum.CodeCommandExpectVersionConflict {
		t.Fatalf("error %T %v is not a ResultError with the code", err, err)
	}
	if streams, _ := store.Load(context.Background(), id, 1, eventstore.MaxVersion); len(streams) != 2 {
		t.Fatalf("%d streams, want 2", len(streams))
	}
	// The matching expected version goes through.
	if r, err := gw.SendAndWait(context.Background(), factum.NewCommand(id, Add{N: 1}).WithExpectedVersion(2), processed()); err != nil || r.AggregateVersion != 3 {
		t.Fatalf("%+v %v", r, err)
	}
}

// A handler error is a failed PROCESSED, and a branch-stage waiter fails at
// once with it, although a function would consume the events.
func TestHandlerErrorFailsBranchWait(t *testing.T) {
	cons := &consumers{fns: map[factum.CommandStage][]factum.Function{
		factum.StageProjected: {{Context: "test", Processor: "proj", Name: "on_added"}},
	}}
	rt, def := newRuntime(t, engine.Config{Consumers: cons}, nil)
	plan := command.Wait(factum.StageProjected).Within(time.Minute)
	r, err := rt.Gateway().SendAndWait(context.Background(), factum.NewCommand(def.ID("r1"), Reject{}), plan)
	mustCode(t, err, factum.CodeIllegalState)
	if r.Stage != factum.StageProcessed || r.Succeeded() || r.Message == "" {
		t.Fatalf("result %+v, want failed PROCESSED", r)
	}
	if n := rt.Gateway().Waiters().Len(); n != 0 {
		t.Fatalf("%d waiters left", n)
	}
}

// A panicking handler fails its own command with InternalServerError; the
// lane goes on.
func TestHandlerPanic(t *testing.T) {
	rt, def := newRuntime(t, engine.Config{Lanes: 1}, nil)
	gw := rt.Gateway()
	_, err := gw.SendAndWait(context.Background(), factum.NewCommand(def.ID("p"), Explode{}), processed())
	mustCode(t, err, factum.CodeInternalServerError)
	r, err := gw.SendAndWait(context.Background(), factum.NewCommand(def.ID("p"), Add{N: 1}), processed())
	if err != nil || r.AggregateVersion != 1 {
		t.Fatalf("after a panic: %+v %v", r, err)
	}
}

// A timeout is RequestTimeout with the outcome unknown and leaves no waiter.
func TestTimeoutLeavesNoWaiter(t *testing.T) {
	cons := &consumers{fns: map[factum.CommandStage][]factum.Function{
		factum.StageProjected: {{Context: "test", Processor: "silent", Name: "never_signals"}},
	}}
	rt, def := newRuntime(t, engine.Config{Consumers: cons}, nil)
	gw := rt.Gateway()
	var wg sync.WaitGroup
	for i := range 20 {
		wg.Go(func() {
			r, err := gw.SendAndWait(context.Background(), factum.NewCommand(def.ID(fmt.Sprint("t", i)), Add{N: 1}),
				command.Wait(factum.StageProjected).Within(500*time.Millisecond))
			mustCodeNoFatal(t, err, factum.CodeRequestTimeout)
			if r.AggregateVersion != 1 {
				t.Errorf("timeout result keeps what was known: %+v", r)
			}
		})
	}
	wg.Wait()
	if n := gw.Waiters().Len(); n != 0 {
		t.Fatalf("%d waiters left after timeouts", n)
	}
}

func mustCodeNoFatal(t *testing.T, err error, want factum.Code) {
	t.Helper()
	if got := factum.CodeOf(err); got != want {
		t.Errorf("error code = %s (%v), want %s", got, err, want)
	}
}

// Shutdown drains every accepted command and refuses new work.
func TestShutdownDrains(t *testing.T) {
	store := eventstore.NewMemory()
	g := newGate()
	rt, def := newRuntime(t, engine.Config{Store: store, Lanes: 2}, g)
	gw := rt.Gateway()
	const n = 50
	for i := range n {
		if _, err := gw.Send(context.Background(), factum.NewCommand(def.ID(fmt.Sprint("s", i%5)), Block{})); err != nil {
			t.Fatal(err)
		}
	}
	<-g.entered // a command is inside its handler
	done := make(chan error, 1)
	go func() { done <- rt.Shutdown(context.Background()) }()
	// Admission closes at once, while accepted work is still held.
	deadline := time.Now().Add(5 * time.Second)
	for {
		_, err := gw.Send(context.Background(), factum.NewCommand(def.ID("late"), Add{N: 1}))
		if errors.Is(err, command.ErrClosed) {
			mustCode(t, err, factum.CodeTooManyRequests)
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("sends still accepted during shutdown")
		}
		time.Sleep(time.Millisecond)
	}
	close(g.release)
	if err := <-done; err != nil {
		t.Fatalf("Shutdown: %v", err)
	}
	total := 0
	for i := range 5 {
		s, _ := store.Load(context.Background(), def.ID(fmt.Sprint("s", i)), 1, eventstore.MaxVersion)
		total += len(s)
	}
	if total != n {
		t.Fatalf("%d commands appended, want all %d accepted", total, n)
	}
	if err := rt.Start(context.Background()); !errors.Is(err, engine.ErrStopped) {
		t.Fatalf("Start after Shutdown: %v", err)
	}
}

// At the shutdown deadline the command in progress is cancelled and the
// queued ones are answered (not appended) instead of waiting forever.
func TestShutdownDeadline(t *testing.T) {
	g := newGate()
	rt, def := newRuntime(t, engine.Config{Lanes: 1}, g)
	gw := rt.Gateway()
	waits := make(chan error, 3)
	send := func(i int) {
		go func() {
			_, err := gw.SendAndWait(context.Background(), factum.NewCommand(def.ID("d"), Block{}).WithRequestID(fmt.Sprint("d", i)), processed())
			waits <- err
		}()
	}
	// The first command holds the lane; the two sent after it are queued
	// behind it, whatever the lane takes at once.
	send(0)
	<-g.entered
	send(1)
	send(2)
	for rt.Dispatcher().Pending() < 2 {
		time.Sleep(time.Millisecond)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	err := rt.Shutdown(ctx)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Shutdown past its deadline: %v", err)
	}
	closed := 0
	for range 3 {
		if err := <-waits; errors.Is(err, command.ErrClosed) || factum.CodeOf(err) == factum.CodeTooManyRequests {
			closed++
		}
	}
	if closed < 2 {
		t.Fatalf("%d queued commands answered as not processed, want 2", closed)
	}
}

// A cancelled context stops the wait, not the command.
func TestCancelStopsWaitNotCommand(t *testing.T) {
	store := eventstore.NewMemory()
	g := newGate()
	rt, def := newRuntime(t, engine.Config{Store: store}, g)
	gw := rt.Gateway()
	id := def.ID("c")
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() {
		_, err := gw.SendAndWait(ctx, factum.NewCommand(id, Block{}).WithRequestID("req-c"), processed())
		errc <- err
	}()
	<-g.entered
	cancel()
	err := <-errc
	mustCode(t, err, factum.CodeRequestTimeout)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("error %v does not wrap context.Canceled", err)
	}
	if n := gw.Waiters().Len(); n != 0 {
		t.Fatalf("%d waiters left", n)
	}
	close(g.release)
	// The command still completes; Lookup finds it.
	deadline := time.Now().Add(5 * time.Second)
	for {
		r, err := gw.Lookup(context.Background(), id, "req-c")
		if err == nil {
			if r.AggregateVersion != 1 || r.Stage != factum.StageProcessed {
				t.Fatalf("lookup %+v", r)
			}
			break
		}
		mustCode(t, err, factum.CodeNotFound)
		if time.Now().After(deadline) {
			t.Fatal("cancelled command never appended")
		}
		time.Sleep(time.Millisecond)
	}
}

// Full lanes: TooManyRequests at once when configured, back-pressure until
// the context ends otherwise. Memory stays bounded either way.
func TestFullLanes(t *testing.T) {
	for _, reject := range []bool{true, false} {
		t.Run(fmt.Sprint("reject=", reject), func(t *testing.T) {
			g := newGate()
			rt, def := newRuntime(t, engine.Config{Lanes: 1, QueueSize: 1, RejectWhenFull: reject}, g)
			gw := rt.Gateway()
			if _, err := gw.Send(context.Background(), factum.NewCommand(def.ID("f"), Block{})); err != nil {
				t.Fatal(err)
			}
			<-g.entered // the lane is busy
			if _, err := gw.Send(context.Background(), factum.NewCommand(def.ID("f"), Block{})); err != nil {
				t.Fatal(err) // fills the queue
			}
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
			defer cancel()
			r, err := gw.Send(ctx, factum.NewCommand(def.ID("f"), Block{}))
			mustCode(t, err, factum.CodeTooManyRequests)
			if r.Stage != factum.StageSent || !factum.IsRetryable(err) {
				t.Fatalf("result %+v, retryable %v", r, factum.IsRetryable(err))
			}
			if !reject && !errors.Is(err, context.DeadlineExceeded) {
				t.Fatalf("back-pressure ended by %v, want the context's deadline", err)
			}
			close(g.release)
		})
	}
}

// Many waits of every kind leave no waiter behind.
func TestNoWaiterLeak(t *testing.T) {
	rt, def := newRuntime(t, engine.Config{}, nil)
	gw := rt.Gateway()
	var wg sync.WaitGroup
	for i := range 200 {
		wg.Go(func() {
			id := def.ID(fmt.Sprint("leak", i%7))
			var body any = Add{N: 1}
			switch i % 4 {
			case 1:
				body = Reject{}
			case 2:
				body = Add{N: -1} // invalid
			}
			plan := processed()
			if i%3 == 0 {
				plan = command.Wait(factum.StageSnapshot)
			}
			gw.SendAndWait(context.Background(), factum.NewCommand(id, body), plan)
		})
	}
	wg.Wait()
	if n := gw.Waiters().Len(); n != 0 {
		t.Fatalf("%d waiters left", n)
	}
}

// A create command without an aggregate ID gets one derived from its
// request ID, so its retry is recognised as the same request.
func TestCreateWithoutIDIsDerived(t *testing.T) {
	store := eventstore.NewMemory()
	for _, disabled := range []bool{false, true} {
		t.Run(fmt.Sprint("precheck-disabled=", disabled), func(t *testing.T) {
			rt, def := newRuntime(t, engine.Config{Store: store, DisablePrecheck: disabled}, nil)
			gw := rt.Gateway()
			req := fmt.Sprint("create-once-", disabled)
			first, err := gw.SendAndWait(context.Background(), factum.NewCommand(def.ID(""), Open{}).WithRequestID(req), processed())
			if err != nil {
				t.Fatal(err)
			}
			if first.AggregateID.ID != command.CreateID(factum.NamedAggregate{Context: "test", Aggregate: "counter"}, factum.DefaultTenant, req) || first.AggregateVersion != 1 || first.Duplicate {
				t.Fatalf("first %+v", first)
			}
			again, err := gw.SendAndWait(context.Background(), factum.NewCommand(def.ID(""), Open{}).WithRequestID(req), processed())
			if err != nil {
				t.Fatal(err)
			}
			if again.AggregateID != first.AggregateID || again.AggregateVersion != 1 || !again.Duplicate {
				t.Fatalf("retry %+v, want the first outcome marked Duplicate", again)
			}
			// Another intent creating the same ID is a conflict, not a duplicate.
			_, err = gw.SendAndWait(context.Background(), factum.NewCommand(first.AggregateID, Open{}), processed())
			mustCode(t, err, factum.CodeDuplicateAggregateID)
		})
	}
}

// A retry rejected by the state its first attempt produced still gets the
// first attempt's outcome.
func TestDuplicateAfterStateChange(t *testing.T) {
	rt, def := newRuntime(t, engine.Config{DisablePrecheck: true}, nil)
	gw := rt.Gateway()
	id := def.ID("del")
	if _, err := gw.SendAndWait(context.Background(), factum.NewCommand(id, Add{N: 1}), processed()); err != nil {
		t.Fatal(err)
	}
	if _, err := gw.SendAndWait(context.Background(), factum.NewCommand(id, deleteBody()).WithRequestID("del-1"), processed()); err != nil {
		t.Fatal(err)
	}
	// The retry would now hit the deleted gate; the store says it was done.
	r, err := gw.SendAndWait(context.Background(), factum.NewCommand(id, deleteBody()).WithRequestID("del-1"), processed())
	if err != nil || !r.Duplicate || r.AggregateVersion != 2 {
		t.Fatalf("%+v %v", r, err)
	}
}

// Delete refuses everything but recover; recover restores the aggregate.
func TestDeleteRecover(t *testing.T) {
	rt, def := newRuntime(t, engine.Config{}, nil)
	gw := rt.Gateway()
	id := def.ID("dr")
	send := func(body any) (command.Result, error) {
		return gw.SendAndWait(context.Background(), factum.NewCommand(id, body), processed())
	}
	_, err := send(recoverBody())
	mustCode(t, err, factum.CodeNotFound)
	if _, err := send(Add{N: 1}); err != nil {
		t.Fatal(err)
	}
	_, err = send(recoverBody())
	mustCode(t, err, factum.CodeIllegalState)
	if r, err := send(deleteBody()); err != nil || r.AggregateVersion != 2 {
		t.Fatalf("%+v %v", r, err)
	}
	_, err = send(Add{N: 1})
	mustCode(t, err, factum.CodeIllegalAccessDeletedAggregate)
	_, err = send(deleteBody())
	mustCode(t, err, factum.CodeIllegalAccessDeletedAggregate)
	if r, err := send(recoverBody()); err != nil || r.AggregateVersion != 3 {
		t.Fatalf("%+v %v", r, err)
	}
	if r, err := send(Add{N: 1}); err != nil || r.AggregateVersion != 4 {
		t.Fatalf("%+v %v", r, err)
	}
}

// Two instances share a store: an instance whose cache is behind still
// accepts a command expecting the version the other one appended.
func TestExpectedVersionAheadOfTheCacheReloads(t *testing.T) {
	store := eventstore.NewMemory()
	rt1, def := newRuntime(t, engine.Config{Store: store, DisablePrecheck: true}, nil)
	rt2, _ := newRuntime(t, engine.Config{Store: store, DisablePrecheck: true}, nil)
	ctx := context.Background()
	id := def.ID("shared")
	if _, err := rt1.Gateway().SendAndWait(ctx, factum.NewCommand(id, Add{N: 1}), processed()); err != nil {
		t.Fatal(err) // rt1 caches version 1
	}
	if _, err := rt2.Gateway().SendAndWait(ctx, factum.NewCommand(id, Add{N: 1}), processed()); err != nil {
		t.Fatal(err) // version 2, appended by the other instance
	}
	res, err := rt1.Gateway().SendAndWait(ctx, factum.NewCommand(id, Add{N: 1}).WithExpectedVersion(2), processed())
	if err != nil || res.AggregateVersion != 3 {
		t.Fatalf("command expecting version 2 on the stale instance = %+v, %v", res, err)
	}
	_, err = rt1.Gateway().SendAndWait(ctx, factum.NewCommand(id, Add{N: 1}).WithExpectedVersion(2), processed())
	mustCode(t, err, factum.CodeCommandExpectVersionConflict)
}
