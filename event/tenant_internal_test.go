package event

import (
	"context"
	"fmt"
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

// BenchmarkLaneDelivery delivers streams of one tenant, or of three in
// turn, to a function under the default middleware on one lane: the
// consumer's own cost per delivery, without the log.
func BenchmarkLaneDelivery(b *testing.B) {
	named := factum.NamedAggregate{Context: "shop", Aggregate: "cart"}
	for _, tenants := range []int{1, 3} {
		b.Run(fmt.Sprintf("tenants=%d", tenants), func(b *testing.B) {
			streams := make([]factum.EventStream, 3)
			for i := range streams {
				streams[i].AggregateID = named.WithID("c").WithTenant(fmt.Sprint("t", i%tenants))
			}
			h := &Handler{Function: factum.Function{Name: "noop"}, Handle: func(context.Context, *factum.EventStream) error { return nil }}
			f := wrap(h, []Middleware{Retry(3, time.Millisecond), Timeout(time.Minute), Recover()})
			lane := &attemptDeadlines{parent: context.Background()}
			b.Cleanup(lane.release)
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				s := &streams[i%len(streams)]
				ctx, _ := lane.start(s)
				_ = f(ctx, s)
			}
		})
	}
}
