package projection_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/command"
	"github.com/factum-go/factum/engine"
	"github.com/factum-go/factum/projection"
)

// A PROJECTED wait on a projection with a Schema returns after its
// transaction committed: its query right after the wait sees the write,
// every time, before and after a blue/green rebuild.
func TestComponentReadAfterWriteThroughAQuery(t *testing.T) {
	for _, b := range storageBackends() {
		t.Run(b.name, func(t *testing.T) {
			storage, ps := b.open(t)
			p := versionedItems(t, new(atomic.Bool))
			comp := projection.NewComponent(projection.ComponentConfig{Store: ps, Projections: []*projection.Projection{p},
				Runner: projection.Config{PollInterval: 20 * time.Millisecond}})
			eng := startShop(t, engine.Config{Storage: storage, Components: []engine.Component{comp}})
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			send := func(i int) {
				t.Helper()
				res, err := eng.Gateway().SendAndWait(ctx, factum.NewCommand(carts.WithID("cart-q"), addItem{}),
					command.Wait(factum.StageProjected).Within(20*time.Second))
				if err != nil || res.Code != factum.CodeOk || res.Function != p.Function() {
					t.Fatalf("command %d: %+v, %v", i, res, err)
				}
				if got := cartCount(t, comp, "cart-q"); got != i {
					t.Fatalf("after PROJECTED of command %d the query answers %d items", i, got)
				}
			}
			for i := 1; i <= 5; i++ {
				send(i)
			}
			if err := comp.Rebuild(ctx, "shop", "items"); err != nil {
				t.Fatal(err)
			}
			for i := 6; i <= 10; i++ {
				send(i)
			}
			for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(10 * time.Millisecond) {
				s, err := comp.Status(ctx, "shop", "items")
				if err != nil {
					t.Fatal(err)
				}
				if s.Live.Number == 2 && s.Next == nil {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("the rebuild did not switch: %+v", s)
				}
			}
			send(11)
		})
	}
}
