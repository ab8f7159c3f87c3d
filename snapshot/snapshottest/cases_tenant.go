package snapshottest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/snapshot"
)

// testTenantRace races two tenants to create one aggregate's snapshot:
// one tenant wins for good, and every save of the other is a
// TenantMismatch, never stored.
func testTenantRace(t *testing.T, st snapshot.Store) {
	ctx := context.Background()
	named := newFixture(t).Named
	for round := range 5 {
		id := named.WithID(fmt.Sprintf("contested-%d", round))
		tenants := []string{"tenant-a", "tenant-b"}
		var mu sync.Mutex
		saved := map[string]int{}
		mismatched := map[string]int{}
		var wg sync.WaitGroup
		errs := make(chan error, 16)
		for w := range 16 {
			tenant := tenants[w%2]
			wg.Go(func() {
				for v := 1; v <= 10; v++ {
					ok, err := st.Save(ctx, snapshot.Snapshot{AggregateID: id.WithTenant(tenant), Version: v, State: json.RawMessage(`{}`)})
					mu.Lock()
					switch {
					case errors.Is(err, factum.ErrTenantMismatch):
						mismatched[tenant]++
					case err != nil:
						errs <- err
					case ok:
						saved[tenant]++
					}
					mu.Unlock()
				}
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatal(err)
		}
		if len(saved) != 1 {
			t.Fatalf("round %d: saves stored for tenants %v; want exactly one tenant", round, saved)
		}
		for winner := range saved {
			if mismatched[winner] != 0 {
				t.Errorf("round %d: the winning tenant got %d mismatches", round, mismatched[winner])
			}
			loser := tenants[0]
			if loser == winner {
				loser = tenants[1]
			}
			if mismatched[loser] != 80 {
				t.Errorf("round %d: the losing tenant got %d mismatches of 80 saves", round, mismatched[loser])
			}
			if got, err := st.Load(ctx, id.WithTenant(winner)); err != nil || got.Version != 10 {
				t.Errorf("round %d: load as the winner: v%d, %v", round, got.Version, err)
			}
			if _, err := st.Load(ctx, id.WithTenant(loser)); !errors.Is(err, factum.ErrTenantMismatch) {
				t.Errorf("round %d: load as the loser: %v", round, err)
			}
		}
	}
}
