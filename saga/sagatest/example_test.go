package sagatest_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/event"
	"github.com/factum-go/factum/saga"
	"github.com/factum-go/factum/saga/sagatest"
)

type Paid struct{ OrderID string }
type Ship struct{ OrderID string }

func Example() {
	shipping := saga.New("shop", "shipping", saga.On(func(ctx context.Context, m event.Message, e Paid) ([]factum.Command, error) {
		to := factum.NamedAggregate{Context: "shop", Aggregate: "shipment"}.WithID(e.OrderID)
		return []factum.Command{factum.NewCommand(to, Ship(e))}, nil
	}))
	t := &testing.T{} // in a real test, the test's own *testing.T
	out := sagatest.For(t, shipping).When(Paid{OrderID: "o-9"}).ExpectCommands(Ship{OrderID: "o-9"})
	fmt.Println(len(out.Commands), out.Commands[0].AggregateID.ID)
	// Output: 1 o-9
}
