package event

import (
	"context"
	"testing"
	"time"

	"github.com/factum-go/factum"
)

// A lane gives its deliveries their streams' tenants without an
// allocation once it has met the tenants, under the default middleware,
// when consecutive streams are of different tenants too.
func TestLaneTenantContextsAllocateNothing(t *testing.T) {
	var wrong int
	h := &Handler{Function: factum.Function{Name: "see"}, Handle: func(ctx context.Context, s *factum.EventStream) error {
		if got, _ := factum.TenantFromContext(ctx); got != s.AggregateID.TenantOrDefault() {
			wrong++
		}
		return nil
	}}
	f := wrap(h, []Middleware{Retry(3, time.Millisecond), Timeout(time.Minute), Recover()})
	named := factum.NamedAggregate{Context: "shop", Aggregate: "cart"}
	streams := []factum.EventStream{
		{AggregateID: named.WithID("a").WithTenant("acme")},
		{AggregateID: named.WithID("b").WithTenant("globex")},
		{AggregateID: named.WithID("c")},
		{AggregateID: named.WithID("d").WithTenant("acme")},
	}
	lane := &attemptDeadlines{parent: context.Background()}
	t.Cleanup(lane.release)
	deliver := func() {
		for i := range streams {
			ctx, _ := lane.start(&streams[i])
			if err := f(ctx, &streams[i]); err != nil {
				t.Fatal(err)
			}
		}
	}
	deliver() // meet the tenants
	if n := testing.AllocsPerRun(100, deliver); n != 0 {
		t.Errorf("%v allocations per %d deliveries, want none", n, len(streams))
	}
	if wrong != 0 {
		t.Fatalf("%d deliveries saw another tenant than their stream's", wrong)
	}
}
