package projection_test

import (
	"context"
	"testing"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/projection"
)

// TestConsumesFollowsEventsAndFrom pins what a projection consumes under
// each combination of its Events and From options: an option left out, or
// given no names, restricts nothing; names given over several options add
// up; both options must hold.
func TestConsumesFollowsEventsAndFrom(t *testing.T) {
	carts := factum.NamedAggregate{Context: "shop", Aggregate: "cart"}
	orders := factum.NamedAggregate{Context: "shop", Aggregate: "order"}
	users := factum.NamedAggregate{Context: "iam", Aggregate: "user"}
	type probe struct {
		from  factum.NamedAggregate
		event string
	}
	probes := []probe{{carts, "item_added"}, {carts, "item_removed"}, {orders, "item_added"}, {orders, "placed"}, {users, "placed"}}
	tests := []struct {
		name string
		opts []projection.Option
		want []bool // per probe
	}{
		{"no options", nil, []bool{true, true, true, true, true}},
		{"empty options", []projection.Option{projection.Events(), projection.From()}, []bool{true, true, true, true, true}},
		{"events", []projection.Option{projection.Events("item_added")}, []bool{true, false, true, false, false}},
		{"events over two options", []projection.Option{projection.Events("item_added"), projection.Events("placed")},
			[]bool{true, false, true, true, true}},
		{"from", []projection.Option{projection.From(carts)}, []bool{true, true, false, false, false}},
		{"from over two options", []projection.Option{projection.From(carts), projection.From(users)},
			[]bool{true, true, false, false, true}},
		{"events and from", []projection.Option{projection.Events("item_added", "placed"), projection.From(orders)},
			[]bool{false, false, true, true, false}},
		{"from and empty events", []projection.Option{projection.From(orders, users), projection.Events()},
			[]bool{false, false, true, true, true}},
	}
	fn := func(context.Context, projection.Tx, *factum.EventStream) error { return nil }
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := projection.New("shop", "probe", fn, tt.opts...)
			if err != nil {
				t.Fatal(err)
			}
			for i, pr := range probes {
				if got := p.Consumes(pr.from, pr.event); got != tt.want[i] {
					t.Errorf("Consumes(%s/%s, %s) = %v, want %v", pr.from.Context, pr.from.Aggregate, pr.event, got, tt.want[i])
				}
			}
		})
	}
}
