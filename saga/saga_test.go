package saga_test

import (
	"context"
	"errors"
	"testing"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/codec"
	"github.com/factum-go/factum/command"
	"github.com/factum-go/factum/event"
	"github.com/factum-go/factum/eventstore"
	"github.com/factum-go/factum/saga"
	"github.com/factum-go/factum/saga/sagatest"
)

var stock = factum.NamedAggregate{Context: "shop", Aggregate: "stock"}

type OrderPlaced struct {
	OrderID string `json:"orderId"`
	SKUs    []string
}

type Reserve struct {
	OrderID string
	SKU     string
}

func reservations() *saga.Saga {
	return saga.New("shop", "reservation", saga.On(func(ctx context.Context, m event.Message, e OrderPlaced) ([]factum.Command, error) {
		if e.OrderID == "" {
			return nil, factum.IllegalArgument("order without ID")
		}
		var cmds []factum.Command
		for _, sku := range e.SKUs {
			cmds = append(cmds, factum.NewCommand(stock.WithID(sku), Reserve{OrderID: e.OrderID, SKU: sku}))
		}
		return cmds, nil
	}))
}

func TestSagaSpec(t *testing.T) {
	source := factum.NamedAggregate{Context: "shop", Aggregate: "order"}.WithID("o-1").WithTenant("acme")
	out := sagatest.For(t, reservations()).From(source).
		When(OrderPlaced{OrderID: "o-1", SKUs: []string{"a", "b"}}).
		ExpectCommands(Reserve{"o-1", "a"}, Reserve{"o-1", "b"}).
		ExpectTargets(stock.WithID("a").WithTenant("acme"), stock.WithID("b").WithTenant("acme"))
	if out.Commands[0].RequestID == out.Commands[1].RequestID {
		t.Fatal("two commands share a request ID")
	}
	sagatest.For(t, reservations()).When(OrderPlaced{OrderID: "o-2"}).ExpectNone()
	sagatest.For(t, reservations()).When(OrderPlaced{}).ExpectError(factum.CodeIllegalArgument)
}

func TestRequestIDsDeriveFromTheEvent(t *testing.T) {
	stream := &factum.EventStream{AggregateID: stock.WithID("x").WithTenant("t1"), Header: map[string]string{"trace": "1", "k": "stream"}}
	ev := &factum.DomainEvent{ID: "event-1"}
	m := event.Message{Stream: stream, Event: ev}
	cmds := []factum.Command{
		factum.NewCommand(stock.WithID("a"), Reserve{}).WithHeader("k", "command"),
		factum.NewCommand(stock.WithID("b").WithTenant("explicit"), Reserve{}),
	}
	first, again := saga.Prepare(m, cmds), saga.Prepare(m, cmds)
	for i := range first {
		if first[i].RequestID != again[i].RequestID {
			t.Fatalf("command %d: request IDs differ across deliveries", i)
		}
	}
	if first[0].RequestID == first[1].RequestID {
		t.Fatal("commands of one event share a request ID")
	}
	if first[0].AggregateID.Tenant != "t1" || first[1].AggregateID.Tenant != "explicit" {
		t.Fatalf("tenants = %q, %q", first[0].AggregateID.Tenant, first[1].AggregateID.Tenant)
	}
	if first[0].Header["trace"] != "1" || first[0].Header["k"] != "command" {
		t.Fatalf("header = %v", first[0].Header)
	}
	other := saga.Prepare(event.Message{Stream: stream, Event: &factum.DomainEvent{ID: "event-2"}}, cmds)
	if other[0].RequestID == first[0].RequestID {
		t.Fatal("two events give the same request ID")
	}
}

func TestProcessorNeedsSender(t *testing.T) {
	if _, err := reservations().Processor(nil, nil); !errors.Is(err, factum.ErrIllegalArgument) {
		t.Fatalf("err = %v", err)
	}
}

// okSender decides every command at once.
type okSender struct{}

func (okSender) SendAndWait(_ context.Context, c factum.Command, _ command.WaitPlan) (command.Result, error) {
	return command.Result{Stage: factum.StageProcessed, CommandID: c.ID, RequestID: c.RequestID, AggregateID: c.AggregateID, Code: factum.CodeOk}, nil
}

// A saga carries its own consumer settings and middleware to its
// processor.
func TestSagaCarriesSettingsAndMiddleware(t *testing.T) {
	var seen []string
	mw := func(h *event.Handler, next event.StreamFunc) event.StreamFunc {
		return func(ctx context.Context, s *factum.EventStream) error {
			seen = append(seen, h.Function.String())
			return next(ctx, s)
		}
	}
	s := saga.New("shop", "tuned",
		saga.WithSettings(event.Settings{Attempts: 7, Concurrency: 2}),
		saga.WithMiddleware(mw),
		saga.On(func(context.Context, event.Message, OrderPlaced) ([]factum.Command, error) { return nil, nil }))
	p, err := s.Processor(codec.NewRegistry(), okSender{})
	if err != nil {
		t.Fatal(err)
	}
	if got := p.Settings(); got.Attempts != 7 || got.Concurrency != 2 {
		t.Fatalf("settings %+v", got)
	}
	st := eventstore.NewMemory()
	if err := st.Append(t.Context(), &factum.EventStream{ID: factum.NewID(), AggregateID: stock.WithID("x").WithTenant(factum.DefaultTenant), Version: 1,
		CommandID: factum.NewID(), RequestID: factum.NewID(), Events: []factum.DomainEvent{{ID: factum.NewID(), Name: "order_placed", Sequence: 1, IsLast: true, Body: []byte(`{"orderId":"o"}`)}}}); err != nil {
		t.Fatal(err)
	}
	done := make(chan factum.Signal, 1)
	c, err := event.NewConsumer(p, event.Config{Log: st, Checkpoints: event.NewMemoryCheckpoints(), Notify: func(s factum.Signal) { done <- s }})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	go func() { _ = c.Run(ctx) }()
	if sig := <-done; !sig.Succeeded() {
		t.Fatalf("%+v", sig)
	}
	cancel()
	if len(seen) != 1 || seen[0] != "shop/tuned/on_order_placed" {
		t.Fatalf("middleware saw %v", seen)
	}
}
