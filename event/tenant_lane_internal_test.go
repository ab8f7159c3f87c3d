package event

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/factum-go/factum"
)

// laneCarts is the aggregate of the lane tests' streams.
var laneCarts = factum.NamedAggregate{Context: "shop", Aggregate: "cart"}

// laneStep is one delivery on a lane in a laneCase: a stream of tenant to
// the chain chain, after the lane's deadline context was ended (release,
// as the consumer does when nothing came for a while) when release is set.
type laneStep struct {
	tenant  string
	chain   int
	release bool
}

// laneSaw is what a function saw of its context on one delivery.
type laneSaw struct {
	tenant      string
	err         error
	deadline    time.Time
	hasDeadline bool
}

// Whatever the order of tenants, chains and ends of the lane's deadline
// context, a lane gives each delivery a context of the stream's tenant,
// live, bounded by the chain's own timeout (none without Timeout), and
// carrying the lane's results.
func TestLaneContextsStayCurrent(t *testing.T) {
	timeouts := []time.Duration{time.Minute, 2 * time.Minute, 0}
	many := func(n int) []laneStep {
		var steps []laneStep
		for round := range 2 {
			for i := range n {
				steps = append(steps, laneStep{tenant: fmt.Sprint("t", i), chain: (i + round) % 2, release: i == n/2})
			}
		}
		return steps
	}
	for _, c := range []struct {
		name  string
		steps []laneStep
	}{
		{"tenants alternate", []laneStep{{tenant: "acme"}, {tenant: "globex"}, {tenant: "acme"}, {tenant: factum.DefaultTenant}, {tenant: "acme"}}},
		{"an old tenant returns after a release", []laneStep{{tenant: "acme"}, {tenant: "globex"}, {tenant: "globex", release: true}, {tenant: "acme"}, {tenant: "globex", release: true}, {tenant: "acme"}}},
		{"an old tenant returns after its deadline context was replaced", []laneStep{{tenant: "acme"}, {tenant: "globex", chain: 1}, {tenant: "acme"}, {tenant: "globex", chain: 1}, {tenant: "acme", chain: 1}, {tenant: "globex"}}},
		{"without a timeout between timeouts", []laneStep{{tenant: "acme"}, {tenant: "globex", chain: 2}, {tenant: "acme", chain: 2, release: true}, {tenant: "globex"}, {tenant: "acme"}}},
		{"more tenants than the lane keeps", many(3*maxTenantLanes/2 + 1)},
	} {
		t.Run(c.name, func(t *testing.T) {
			var saw laneSaw
			h := &Handler{Function: factum.Function{Name: "see"}, Handle: func(ctx context.Context, s *factum.EventStream) error {
				saw.tenant, _ = factum.TenantFromContext(ctx)
				saw.err = ctx.Err()
				saw.deadline, saw.hasDeadline = ctx.Deadline()
				AddResult(ctx, "tenant", saw.tenant)
				return nil
			}}
			chains := make([]StreamFunc, len(timeouts))
			for i, d := range timeouts {
				chains[i] = wrap(h, []Middleware{Retry(2, time.Millisecond), Timeout(d), Recover()})
			}
			lane := &attemptDeadlines{parent: context.Background()}
			t.Cleanup(lane.release)
			for i, step := range c.steps {
				if step.release {
					lane.release()
				}
				s := &factum.EventStream{AggregateID: laneCarts.WithID(fmt.Sprint("c", i)).WithTenant(step.tenant)}
				saw = laneSaw{}
				before := time.Now()
				ctx, res := lane.start(s)
				if err := chains[step.chain](ctx, s); err != nil {
					t.Fatal(err)
				}
				want := s.AggregateID.TenantOrDefault()
				if saw.tenant != want {
					t.Errorf("step %d: the function saw tenant %q, want %q", i, saw.tenant, want)
				}
				if saw.err != nil {
					t.Errorf("step %d (tenant %s): the function got an ended context: %v", i, want, saw.err)
				}
				switch d := timeouts[step.chain]; {
				case d == 0 && saw.hasDeadline:
					t.Errorf("step %d (tenant %s): a deadline without a timeout", i, want)
				case d > 0 && !saw.hasDeadline:
					t.Errorf("step %d (tenant %s): no deadline under a timeout of %v", i, want, d)
				case d > 0 && (saw.deadline.Before(before.Add(d-d/64)) || saw.deadline.After(time.Now().Add(d))):
					t.Errorf("step %d (tenant %s): deadline %v after the start, want within %v of %v", i, want, saw.deadline.Sub(before), d/64, d)
				}
				if got := res.take()["tenant"]; got != want {
					t.Errorf("step %d: the lane's results hold tenant %v, want %q", i, got, want)
				}
			}
		})
	}
}
