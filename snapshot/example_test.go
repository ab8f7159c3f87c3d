package snapshot_test

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/query"
	"github.com/factum-go/factum/snapshot"
)

func Example() {
	ctx := context.Background()
	store := snapshot.NewMemory()
	carts := factum.NamedAggregate{Context: "shop", Aggregate: "cart"}
	at := time.Date(2026, 3, 11, 9, 0, 0, 0, time.UTC)
	save := func(id, tenant string, version int, state string) bool {
		saved, err := store.Save(ctx, snapshot.Snapshot{
			AggregateID: carts.WithID(id).WithTenant(tenant),
			Version:     version,
			EventTime:   at,
			State:       json.RawMessage(state),
		})
		if err != nil {
			fmt.Println(err)
		}
		return saved
	}
	save("c1", "acme", 2, `{"items":2,"total":40}`)
	save("c2", "acme", 5, `{"items":1,"total":15}`)
	save("c3", "other", 1, `{"items":9,"total":99}`)
	// A late save of an older version changes nothing.
	fmt.Println("stale save stored:", save("c2", "acme", 4, `{"items":0,"total":0}`))

	svc, _ := snapshot.NewQueryService(store, carts, query.Planner{})
	acme, _ := svc.ForTenant("acme")
	page, _ := acme.PagedState(ctx, query.PagedQuery{
		Condition: query.Gt("state.total", 10),
		Sort:      []query.Sort{query.SortDesc("state.total")},
	})
	fmt.Println("acme carts:", page.Total)
	for _, st := range page.List {
		fmt.Println(string(st))
	}
	// Output:
	// stale save stored: false
	// acme carts: 2
	// {"items":2,"total":40}
	// {"items":1,"total":15}
}

func ExampleVersionOffset() {
	s := snapshot.VersionOffset(5)
	for v := 1; v <= 11; v++ {
		if s.ShouldSave(0, v) {
			fmt.Println("first save at version", v)
			break
		}
	}
	fmt.Println(s.ShouldSave(5, 9), s.ShouldSave(5, 10))
	// Output:
	// first save at version 5
	// false true
}

// A front end over a backend serves one bounded context when its Config
// says so: it refuses another's snapshots before the backend sees them,
// and shapes the backend's answers into the contract's errors.
func ExampleNew() {
	ctx := context.Background()
	shop, err := snapshot.New(snapshot.NewMemory().Backend(), snapshot.Config{Context: "shop", Name: "example"})
	if err != nil {
		fmt.Println(err)
		return
	}
	cart := factum.NamedAggregate{Context: "shop", Aggregate: "cart"}.WithID("c-1")
	invoice := factum.NamedAggregate{Context: "billing", Aggregate: "invoice"}.WithID("i-1")
	saved, err := shop.Save(ctx, snapshot.Snapshot{AggregateID: cart, Version: 1, State: json.RawMessage(`{}`)})
	fmt.Println(saved, err)
	_, err = shop.Save(ctx, snapshot.Snapshot{AggregateID: invoice, Version: 1, State: json.RawMessage(`{}`)})
	fmt.Println(factum.CodeOf(err))
	_, err = shop.Load(ctx, cart.WithTenant("acme"))
	fmt.Println(factum.CodeOf(err))
	// Output:
	// true <nil>
	// IllegalArgument
	// TenantMismatch
}
