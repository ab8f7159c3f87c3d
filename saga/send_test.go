package saga_test

import (
	"context"
	"errors"
	"testing"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/aggregate"
	"github.com/factum-go/factum/command"
	"github.com/factum-go/factum/engine"
	"github.com/factum-go/factum/event"
	"github.com/factum-go/factum/eventstore"
	"github.com/factum-go/factum/internal/enginetest"
	"github.com/factum-go/factum/saga"
)

// scripted is a Sender answering each command with the next scripted
// outcome.
type scripted struct {
	sent    []factum.Command
	answers []func(c factum.Command) (command.Result, error)
}

func (s *scripted) SendAndWait(_ context.Context, c factum.Command, plan command.WaitPlan) (command.Result, error) {
	if plan.Stage != factum.StageProcessed {
		panic("saga waited for " + plan.Stage.String())
	}
	s.sent = append(s.sent, c)
	return s.answers[len(s.sent)-1](c)
}

func processed(c factum.Command) (command.Result, error) {
	return command.Result{Stage: factum.StageProcessed, CommandID: c.ID, AggregateID: c.AggregateID, Code: factum.CodeOk}, nil
}

func failedAt(stage factum.CommandStage, code factum.Code) func(c factum.Command) (command.Result, error) {
	return func(c factum.Command) (command.Result, error) {
		r := command.Result{Stage: stage, CommandID: c.ID, AggregateID: c.AggregateID, Code: code, Message: "scripted"}
		return r, r.Err()
	}
}

func TestSendAllStopsAtTheFirstUndecidedCommand(t *testing.T) {
	m := event.Message{Stream: &factum.EventStream{AggregateID: stock.WithID("src")}, Event: &factum.DomainEvent{ID: "e-1"}}
	cmds := []factum.Command{
		factum.NewCommand(stock.WithID("a"), Reserve{}),
		factum.NewCommand(stock.WithID("b"), Reserve{}),
		factum.NewCommand(stock.WithID("c"), Reserve{}),
	}
	tests := []struct {
		name    string
		second  func(c factum.Command) (command.Result, error)
		refused bool
		code    factum.Code
	}{
		{"refused at PROCESSED", failedAt(factum.StageProcessed, factum.CodeIllegalAccessDeletedAggregate), true, factum.CodeIllegalAccessDeletedAggregate},
		{"refused at SENT", failedAt(factum.StageSent, factum.CodeCommandValidation), true, factum.CodeCommandValidation},
		{"wait timed out", failedAt(factum.StageProcessed, factum.CodeRequestTimeout), false, factum.CodeRequestTimeout},
		{"bus full", failedAt(factum.StageSent, factum.CodeTooManyRequests), false, factum.CodeTooManyRequests},
		{"store failed", failedAt(factum.StageProcessed, factum.CodeInternalServerError), false, factum.CodeInternalServerError},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := &scripted{answers: []func(factum.Command) (command.Result, error){processed, tt.second, processed}}
			ids, err := saga.SendAll(context.Background(), s, m, cmds)
			if len(s.sent) != 2 || len(ids) != 1 {
				t.Fatalf("sent %d, decided %d; want the third never sent", len(s.sent), len(ids))
			}
			var refused *saga.RefusedError
			var pending *saga.PendingError
			if errors.As(err, &refused) != tt.refused || errors.As(err, &pending) == tt.refused {
				t.Fatalf("err = %T %v", err, err)
			}
			if got := factum.CodeOf(err); got != tt.code {
				t.Fatalf("code = %s, want %s", got, tt.code)
			}
		})
	}
}

type counter struct{ N int }

type bump struct{}

type bumped struct{}

var counters = aggregate.New[counter]("test", "counter",
	aggregate.Source(func(c *counter, _ bumped) { c.N++ }),
	aggregate.Handle(func(context.Context, counter, bump) ([]any, error) { return []any{bumped{}}, nil }, aggregate.AllowCreate()),
)

// A redelivered event (a crash after the commands were appended, before
// the checkpoint moved) re-sends the same commands under the same derived
// request IDs: the targets recognise them and nothing happens twice.
func TestRedeliveryAfterACrashIsSafe(t *testing.T) {
	ctx := context.Background()
	store := eventstore.NewMemory()
	rt := enginetest.Start(t, engine.Config{Store: store}, counters)
	m := event.Message{Stream: &factum.EventStream{AggregateID: stock.WithID("src")}, Event: &factum.DomainEvent{ID: "e-1"}}
	cmds := []factum.Command{factum.NewCommand(counters.ID("x"), bump{}), factum.NewCommand(counters.ID("y"), bump{})}
	for delivery := range 3 {
		// Fresh command IDs each time, as a restarted process makes.
		again := make([]factum.Command, len(cmds))
		for i, c := range cmds {
			c.ID = ""
			again[i] = c
		}
		if _, err := saga.SendAll(ctx, rt.Gateway(), m, again); err != nil {
			t.Fatalf("delivery %d: %v", delivery, err)
		}
	}
	for _, id := range []string{"x", "y"} {
		streams, err := store.Load(ctx, counters.ID(id), 1, 100)
		if err != nil || len(streams) != 1 {
			t.Fatalf("%s: %d streams, %v; want exactly 1", id, len(streams), err)
		}
	}
}

type source struct{ N int }

type sourced struct{ N int }

var sources = aggregate.New[source]("test", "source",
	aggregate.Source(func(s *source, e sourced) { s.N = e.N }),
	aggregate.Handle(func(_ context.Context, _ source, c sourced) ([]any, error) { return []any{c}, nil }, aggregate.AllowCreate()),
)

// A saga whose send fails (here: to an aggregate type nobody serves)
// reports a failed SAGA_HANDLED with the send's code, never Ok.
func TestFailedSendIsAFailedSagaHandled(t *testing.T) {
	ctx := context.Background()
	nowhere := factum.NamedAggregate{Context: "test", Aggregate: "nowhere"}
	s := saga.New("test", "forwarder", saga.On(func(context.Context, event.Message, sourced) ([]factum.Command, error) {
		return []factum.Command{factum.NewCommand(nowhere.WithID("x"), bump{})}, nil
	}))
	rt := enginetest.Start(t, engine.Config{Store: eventstore.NewMemory(), Sagas: []*saga.Saga{s}, Events: event.Config{Attempts: 1}}, sources, counters)
	res, err := rt.Gateway().SendAndWait(ctx, factum.NewCommand(sources.ID("s-1"), sourced{N: 1}), command.Wait(factum.StageSagaHandled))
	if err == nil || res.Stage != factum.StageSagaHandled || res.Code != factum.CodeNotFound {
		t.Fatalf("SAGA_HANDLED = %+v, %v; want a NotFound failure", res, err)
	}
}

// A refused command is recorded after one attempt: retrying it in place
// would only be refused again.
func TestRefusalIsRecordedWithoutRetriesInPlace(t *testing.T) {
	ctx := context.Background()
	s := saga.New("test", "refuser", saga.On(func(context.Context, event.Message, sourced) ([]factum.Command, error) {
		return []factum.Command{factum.NewCommand(counters.ID("deleted"), bump{})}, nil
	}))
	failures := make(chan event.Failure, 10)
	rt := enginetest.Start(t, engine.Config{Store: eventstore.NewMemory(), Sagas: []*saga.Saga{s},
		Failures: event.FailureRecorderFunc(func(_ context.Context, f event.Failure) error { failures <- f; return nil }),
		Events:   event.Config{Attempts: 3}}, sources, counters)
	gw := rt.Gateway()
	for _, body := range []any{bump{}, aggregate.DeleteAggregate{}} {
		if _, err := gw.SendAndWait(ctx, factum.NewCommand(counters.ID("deleted"), body), command.Wait(factum.StageProcessed)); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := gw.SendAndWait(ctx, factum.NewCommand(sources.ID("s-1"), sourced{N: 1}), command.Wait(factum.StageSagaHandled)); factum.CodeOf(err) != factum.CodeIllegalAccessDeletedAggregate {
		t.Fatalf("SAGA_HANDLED: %v", err)
	}
	f := <-failures
	if f.Attempts != 1 || factum.CodeOf(f.Err) != factum.CodeIllegalAccessDeletedAggregate {
		t.Fatalf("recorded after %d attempts: %v", f.Attempts, f.Err)
	}
}

type ping struct{}

type pinged struct{}

var pings = aggregate.New[counter]("test", "ping",
	aggregate.Emits[counter, pinged](),
	aggregate.Handle(func(context.Context, counter, ping) ([]any, error) { return []any{pinged{}}, nil }, aggregate.AllowCreate(), aggregate.Void()),
)

// A void command promises only its acceptance: a saga sending one is done
// with it at SENT, and is not refused for waiting longer.
func TestVoidCommandIsDecidedWhenAccepted(t *testing.T) {
	ctx := context.Background()
	s := saga.New("test", "pinger", saga.On(func(context.Context, event.Message, sourced) ([]factum.Command, error) {
		return []factum.Command{factum.NewCommand(pings.ID("p-1"), ping{})}, nil
	}))
	store := eventstore.NewMemory()
	rt := enginetest.Start(t, engine.Config{Store: store, Sagas: []*saga.Saga{s}}, sources, pings)
	if _, err := rt.Gateway().SendAndWait(ctx, factum.NewCommand(sources.ID("s-1"), sourced{N: 1}), command.Wait(factum.StageSagaHandled)); err != nil {
		t.Fatalf("SAGA_HANDLED: %v", err)
	}
}
