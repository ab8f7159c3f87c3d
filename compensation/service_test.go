package compensation_test

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/compensation"
	"github.com/factum-go/factum/engine"
	"github.com/factum-go/factum/event"
	"github.com/factum-go/factum/eventstore"
	"github.com/factum-go/factum/query"
	"github.com/factum-go/factum/snapshot"
)

func ids(items []compensation.Item) []string {
	out := make([]string, len(items))
	for i, it := range items {
		out[i] = it.Execution.Aggregate.ID
	}
	slices.Sort(out)
	return out
}

func TestServiceListsAndScopesByTenant(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend) {
		proj := failingTotals(1 << 30)
		f := newFixture(t, b.open(t), options{totals: proj})
		ctx := context.Background()
		// Each failure is recorded before the clock moves, so that their
		// times order them.
		evA := f.placeIn("o-a", "acme", 1)
		f.execution(evA, nil)
		f.clock.Advance(time.Second)
		evB := f.placeIn("o-b", "globex", 1)
		f.execution(evB, nil)
		f.clock.Advance(time.Second)
		evC := f.placeIn("o-c", "acme", 1)
		f.execution(evC, nil)
		proj.setFail(nil)
		if _, err := f.svc.ForceRetry(ctx, compensation.ExecutionID(totalsFn, evC)); err != nil {
			t.Fatal(err)
		}
		f.execution(evC, func(d compensation.Detail) bool { return d.Execution.Status == compensation.StatusSucceeded })

		all, err := f.svc.List(ctx, compensation.Filter{}, 0)
		if err != nil || len(all) != 3 || all[0].Execution.Aggregate.ID != "o-c" || all[2].Execution.Aggregate.ID != "o-a" {
			t.Fatalf("all, latest failure first: %v, %v", ids(all), err)
		}
		failedA, failedB := all[2].Execution.FailedAt.Time, all[1].Execution.FailedAt.Time
		code := all[0].Execution.Error.Code
		for _, c := range []struct {
			name   string
			filter compensation.Filter
			want   []string
		}{
			{"by error code", compensation.Filter{ErrorCode: code}, []string{"o-a", "o-b", "o-c"}},
			{"by another error code", compensation.Filter{ErrorCode: factum.CodeRequestTimeout}, []string{}},
			{"failed from", compensation.Filter{FailedFrom: failedB}, []string{"o-b", "o-c"}},
			{"failed before", compensation.Filter{FailedTo: failedB}, []string{"o-a"}},
			{"failed in a window", compensation.Filter{FailedFrom: failedA.Add(time.Millisecond), FailedTo: failedB.Add(time.Millisecond)}, []string{"o-b"}},
			{"by status", compensation.Filter{Status: []compensation.Status{compensation.StatusFailed}}, []string{"o-a", "o-b"}},
			{"two statuses", compensation.Filter{Status: []compensation.Status{compensation.StatusFailed, compensation.StatusSucceeded}}, []string{"o-a", "o-b", "o-c"}},
			{"by processor", compensation.Filter{Function: factum.Function{Processor: "order_totals"}}, []string{"o-a", "o-b", "o-c"}},
			{"by another function", compensation.Filter{Function: factum.Function{Name: "on_something"}}, []string{}},
			{"by aggregate type", compensation.Filter{Aggregate: orders.Named()}, []string{"o-a", "o-b", "o-c"}},
			{"by aggregate id", compensation.Filter{AggregateID: "o-b"}, []string{"o-b"}},
			{"by event", compensation.Filter{EventID: evA}, []string{"o-a"}},
			{"by recoverability", compensation.Filter{Recoverability: []compensation.Recoverability{compensation.Unrecoverable}}, []string{}},
			{"needs operator", compensation.Filter{NeedsOperator: true}, []string{}},
		} {
			got, err := f.svc.List(ctx, c.filter, 0)
			if err != nil || !slices.Equal(ids(got), c.want) {
				t.Errorf("%s: %v, %v; want %v", c.name, ids(got), err, c.want)
			}
		}
		page, err := f.svc.Paged(ctx, compensation.Filter{}, query.Pagination{Index: 2, Size: 2})
		if err != nil || page.Total != 3 || len(page.List) != 1 || page.List[0].Execution.Aggregate.ID != "o-a" {
			t.Fatalf("page 2 of 2: %+v, %v", page, err)
		}
		if _, err := f.svc.List(ctx, compensation.Filter{Status: []compensation.Status{"DONE"}}, 0); factum.CodeOf(err) != factum.CodeIllegalArgument {
			t.Fatalf("bad status: %v", err)
		}
		if _, err := f.svc.List(ctx, compensation.Filter{FailedFrom: failedB, FailedTo: failedA}, 0); factum.CodeOf(err) != factum.CodeIllegalArgument {
			t.Fatalf("an empty time window: %v", err)
		}
		if _, err := f.svc.List(ctx, compensation.Filter{ErrorCode: "Oops"}, 0); factum.CodeOf(err) != factum.CodeIllegalArgument {
			t.Fatalf("an unknown error code: %v", err)
		}
		if _, err := f.svc.List(ctx, compensation.Filter{Recoverability: []compensation.Recoverability{"MAYBE"}}, 0); factum.CodeOf(err) != factum.CodeIllegalArgument {
			t.Fatalf("bad recoverability: %v", err)
		}
		if _, err := f.svc.List(ctx, compensation.Filter{}, query.DefaultMaxListSize+1); factum.CodeOf(err) != factum.CodeIllegalArgument {
			t.Fatalf("over the list guard: %v", err)
		}

		acme, err := f.svc.ForTenant("acme")
		if err != nil {
			t.Fatal(err)
		}
		got, err := acme.List(ctx, compensation.Filter{}, 0)
		if err != nil || !slices.Equal(ids(got), []string{"o-a", "o-c"}) {
			t.Fatalf("acme sees %v, %v", ids(got), err)
		}
		idB := compensation.ExecutionID(totalsFn, evB)
		if _, err := acme.Get(ctx, idB); factum.CodeOf(err) != factum.CodeNotFound {
			t.Fatalf("acme reads globex's execution: %v", err)
		}
		if _, err := acme.ForceRetry(ctx, idB); factum.CodeOf(err) != factum.CodeNotFound {
			t.Fatalf("acme retries globex's execution: %v", err)
		}
		if err := acme.MarkRecoverable(ctx, idB, compensation.Unrecoverable); factum.CodeOf(err) != factum.CodeNotFound {
			t.Fatalf("acme marks globex's execution: %v", err)
		}
		d, err := f.svc.Get(ctx, idB)
		if err != nil || d.ID.Tenant != "globex" {
			t.Fatalf("globex's execution: %+v, %v", d.ID, err)
		}
		c, err := acme.Counts(ctx)
		if err != nil || c != (compensation.Counts{Failed: 1, Succeeded: 1}) {
			t.Fatalf("acme counts %+v, %v", c, err)
		}
		if _, err := f.svc.ForTenant("bad/tenant"); factum.CodeOf(err) != factum.CodeIllegalArgument {
			t.Fatalf("bad tenant: %v", err)
		}
		if _, err := f.svc.Get(ctx, ""); factum.CodeOf(err) != factum.CodeIllegalArgument {
			t.Fatalf("empty id: %v", err)
		}
		if _, err := f.svc.Get(ctx, "no-such-execution"); factum.CodeOf(err) != factum.CodeNotFound {
			t.Fatalf("missing execution: %v", err)
		}
	})
}

func TestServiceChangesSpecAndFunction(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend) {
		proj := failingTotals(1)
		f := newFixture(t, b.open(t), options{totals: proj})
		ctx := compensation.WithOperator(context.Background(), "bob")
		ev := f.place("o-1", 2)
		id := compensation.ExecutionID(totalsFn, ev)
		f.execution(ev, nil)

		if err := f.svc.ApplyRetrySpec(ctx, id, compensation.RetrySpec{MaxRetries: 3}); factum.CodeOf(err) != factum.CodeIllegalArgument {
			t.Fatalf("a spec without durations: %v", err)
		}
		spec := compensation.RetrySpec{MaxRetries: 3, MinBackoff: time.Second, ExecutionTimeout: time.Second}
		if err := f.svc.ApplyRetrySpec(ctx, id, spec); err != nil {
			t.Fatal(err)
		}
		// The retry spec applies to later retries; the next one stays due
		// when it was.
		d := f.execution(ev, func(d compensation.Detail) bool { return d.Execution.RetrySpec == spec })
		if d.History[len(d.History)-1].OwnerID != "bob" {
			t.Fatalf("the operator is not recorded: %+v", d.History[len(d.History)-1])
		}

		// A function the runtime does not know: the retry fails with
		// NotFound, recorded like any failure.
		gone := factum.Function{Context: "shop", Processor: "order_totals_v0", Name: "on_order_placed"}
		if err := f.svc.ChangeFunction(ctx, id, factum.Function{Context: "shop"}); factum.CodeOf(err) != factum.CodeIllegalArgument {
			t.Fatalf("an invalid function: %v", err)
		}
		if err := f.svc.ChangeFunction(ctx, id, gone); err != nil {
			t.Fatal(err)
		}
		a, err := f.svc.ForceRetry(ctx, id)
		if err != nil || a.Outcome != compensation.OutcomeFailed || !errors.Is(a.Error, factum.ErrNotFound) {
			t.Fatalf("retry of an unknown function: %+v, %v", a, err)
		}
		d = f.execution(ev, func(d compensation.Detail) bool { return d.Execution.Function == gone })
		if d.Execution.Error.Code != factum.CodeNotFound {
			t.Fatalf("recorded error %+v", d.Execution.Error)
		}
		if err := f.svc.ChangeFunction(ctx, id, totalsFn); err != nil {
			t.Fatal(err)
		}
		f.execution(ev, func(d compensation.Detail) bool { return d.Execution.Function == totalsFn })
		f.clock.Advance(2 * spec.Backoff(1))
		f.runOnce(f.sched, 1, 1, 0)
		if qty, applied, _ := proj.get("o-1"); qty != 2 || applied != 1 {
			t.Fatalf("o-1 is %d, applied %d times", qty, applied)
		}
	})
}

func TestRecorder(t *testing.T) {
	ctx := context.Background()
	snaps := snapshot.NewMemory()
	comp, err := compensation.New(compensation.Config{Context: "shop", Snapshots: snaps, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	store := eventstore.NewMemory()
	failure := func(stream factum.EventStream) event.Failure {
		return event.Failure{Function: totalsFn, Stage: factum.StageProjected, Stream: stream, EventID: stream.Events[0].ID,
			Err: errBoom, Attempts: 3, Time: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)}
	}
	stream := factum.EventStream{ID: factum.NewID(), AggregateID: orders.ID("o-1"), Version: 1, CommandID: "c", RequestID: "r",
		Events: []factum.DomainEvent{{ID: factum.NewID(), Name: "order_placed", Sequence: 1, IsLast: true, Body: []byte(`{}`)}}}

	// Before Bind the recorder refuses, so the consumer delivers again.
	if err := comp.RecordFailure(ctx, failure(stream)); factum.CodeOf(err) != factum.CodeIllegalState {
		t.Fatalf("record before Bind: %v", err)
	}
	other, err := engine.New(engine.Config{Store: store}, orders)
	if err != nil {
		t.Fatal(err)
	}
	if err := comp.Bind(other); factum.CodeOf(err) != factum.CodeIllegalArgument {
		t.Fatalf("Bind to a runtime without the execution type: %v", err)
	}
	rt, err := engine.New(engine.Config{Store: store, SnapshotStore: snaps}, orders, comp.Type())
	if err != nil {
		t.Fatal(err)
	}
	if err := comp.Bind(rt); err != nil {
		t.Fatal(err)
	}
	if err := rt.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = rt.Shutdown(context.Background()) })

	// Recording the same failure again (a redelivery) reaches the same
	// execution as a further failure.
	for range 2 {
		if err := comp.RecordFailure(ctx, failure(stream)); err != nil {
			t.Fatal(err)
		}
	}
	d, err := comp.Service().Get(ctx, compensation.ExecutionID(totalsFn, stream.Events[0].ID))
	if err != nil || d.Execution.Failures != 2 || d.Version != 2 || d.Execution.EventName != "order_placed" {
		t.Fatalf("twice recorded: %+v, %v", d, err)
	}
	// A failure on an execution stream is not recorded: that would feed
	// itself.
	self := d.History[0]
	if err := comp.RecordFailure(ctx, failure(self)); err != nil {
		t.Fatalf("failure on an execution stream: %v", err)
	}
	if _, err := comp.Service().Get(ctx, compensation.ExecutionID(totalsFn, self.Events[0].ID)); factum.CodeOf(err) != factum.CodeNotFound {
		t.Fatalf("a failure on an execution stream was recorded: %v", err)
	}
	// A cancelled context is an error, never a silent success.
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	stream2 := stream
	stream2.AggregateID = orders.ID("o-2")
	if err := comp.RecordFailure(cctx, failure(stream2)); err == nil {
		t.Fatal("a record under a cancelled context reported success")
	}
}

func TestNewRefusesBadConfig(t *testing.T) {
	snaps := snapshot.NewMemory()
	for name, cfg := range map[string]compensation.Config{
		"no context":      {Snapshots: snaps},
		"bad context":     {Context: "shop/x", Snapshots: snaps},
		"bad aggregate":   {Context: "shop", Aggregate: "1st", Snapshots: snaps},
		"no snapshots":    {Context: "shop"},
		"negative limit":  {Context: "shop", Snapshots: snaps, RetrySpec: compensation.RetrySpec{MaxRetries: -1}},
		"bad override":    {Context: "shop", Snapshots: snaps, RetrySpecs: map[factum.Function]compensation.RetrySpec{totalsFn: {MinBackoff: time.Microsecond}}},
		"tiny exec limit": {Context: "shop", Snapshots: snaps, RetrySpec: compensation.RetrySpec{ExecutionTimeout: time.Nanosecond}},
	} {
		if _, err := compensation.New(cfg); factum.CodeOf(err) != factum.CodeIllegalArgument {
			t.Errorf("%s: %v", name, err)
		}
	}
	c, err := compensation.New(compensation.Config{Context: "shop", Snapshots: snaps, Aggregate: "failures",
		RetrySpec: compensation.RetrySpec{MaxRetries: 4},
		RetrySpecs: map[factum.Function]compensation.RetrySpec{
			{Context: "shop"}: {MaxRetries: 5},
			{Context: "shop", Processor: "order_totals"}: {MaxRetries: 6},
			totalsFn: {MaxRetries: 7, MinBackoff: time.Second},
			{Context: "shop", Processor: "p", Name: "f"}: {ExecutionTimeout: time.Second},
		}})
	if err != nil {
		t.Fatal(err)
	}
	if c.Named() != (factum.NamedAggregate{Context: "shop", Aggregate: "failures"}) {
		t.Fatalf("named %v", c.Named())
	}
	def := compensation.DefaultRetrySpec()
	for fn, want := range map[factum.Function]compensation.RetrySpec{
		totalsFn: {MaxRetries: 7, MinBackoff: time.Second, ExecutionTimeout: def.ExecutionTimeout},
		{Context: "shop", Processor: "order_totals", Name: "other"}: {MaxRetries: 6, MinBackoff: def.MinBackoff, ExecutionTimeout: def.ExecutionTimeout},
		{Context: "shop", Processor: "other", Name: "x"}:            {MaxRetries: 5, MinBackoff: def.MinBackoff, ExecutionTimeout: def.ExecutionTimeout},
		{Context: "shop", Processor: "p", Name: "f"}:                {MaxRetries: 4, MinBackoff: def.MinBackoff, ExecutionTimeout: time.Second},
		{Context: "other", Processor: "x", Name: "y"}:               {MaxRetries: 4, MinBackoff: def.MinBackoff, ExecutionTimeout: def.ExecutionTimeout},
	} {
		if got := c.RetrySpecFor(fn); got != want {
			t.Errorf("spec of %s = %+v, want %+v", fn, got, want)
		}
	}
	if err := c.Bind(nil); factum.CodeOf(err) != factum.CodeIllegalArgument {
		t.Errorf("Bind(nil): %v", err)
	}
	if _, err := c.NewScheduler(compensation.SchedulerConfig{}).RunOnce(context.Background()); factum.CodeOf(err) != factum.CodeIllegalState {
		t.Errorf("RunOnce before Bind: %v", err)
	}
}
