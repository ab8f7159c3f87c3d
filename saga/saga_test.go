package saga_test

import (
	"context"
	"errors"
	"testing"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/event"
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
