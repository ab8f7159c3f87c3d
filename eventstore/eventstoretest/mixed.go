package eventstoretest

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/eventstore"
)

// AppendMixedOutcomes appends, from many goroutines at once, streams of
// every outcome the contract knows (new aggregates, next versions, retried
// and competing creates, another tenant, gaps) and checks that each caller
// gets its own outcome and that exactly the appends that should go in are
// stored. It calls burst (if not nil) after appending what the streams
// build on and just before the concurrent appends, and returns how many
// appends it made concurrently. Run includes it; a store that writes
// concurrent appends together (in one statement or transaction) can also
// call it alone, with a store of bounded context "kit", and check how its
// writes were shared.
func AppendMixedOutcomes(t *testing.T, st eventstore.Store, burst func()) int {
	t.Helper()
	f := newFixture(t)
	ctx := context.Background()
	const each = 12
	kinds := []struct {
		name string
		code factum.Code
		make func(existing factum.AggregateID, i int) *factum.EventStream
	}{
		{"new aggregate", factum.CodeOk, func(_ factum.AggregateID, i int) *factum.EventStream {
			return stream(f.ID(fmt.Sprintf("new-%d", i)), 1, "r-1", 1)
		}},
		{"next version", factum.CodeOk, func(e factum.AggregateID, _ int) *factum.EventStream { return stream(e, 2, "r-2", 1) }},
		{"retried create", factum.CodeDuplicateRequestID, func(e factum.AggregateID, _ int) *factum.EventStream { return stream(e, 1, "r-1", 1) }},
		{"competing create", factum.CodeDuplicateAggregateID, func(e factum.AggregateID, _ int) *factum.EventStream { return stream(e, 1, "r-other", 1) }},
		{"other tenant", factum.CodeTenantMismatch, func(e factum.AggregateID, _ int) *factum.EventStream {
			return stream(e.WithTenant("intruder"), 2, "r-2", 1)
		}},
		{"gap", factum.CodeEventVersionConflict, func(e factum.AggregateID, _ int) *factum.EventStream { return stream(e, 3, "r-3", 1) }},
	}
	type call struct {
		kind int
		s    *factum.EventStream
	}
	var calls []call
	for k, kind := range kinds {
		for i := range each {
			existing := f.ID(fmt.Sprintf("existing-%d-%d", k, i)).WithTenant("tenant-a")
			mustAppend(t, st, stream(existing, 1, "r-1", 1))
			calls = append(calls, call{k, kind.make(existing, i)})
		}
	}
	if burst != nil {
		burst()
	}
	errs := make([]error, len(calls))
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i, c := range calls {
		wg.Go(func() {
			<-start
			errs[i] = st.Append(ctx, c.s)
		})
	}
	close(start)
	wg.Wait()
	for i, c := range calls {
		kind := kinds[c.kind]
		if got := factum.CodeOf(errs[i]); got != kind.code {
			t.Errorf("%s: %v, want %s", kind.name, errs[i], kind.code)
		}
		stored := false
		for _, s := range load(t, st, c.s.AggregateID) {
			stored = stored || s.ID == c.s.ID
		}
		if stored != (kind.code == factum.CodeOk) {
			t.Errorf("%s: stored = %v", kind.name, stored)
		}
	}
	return len(calls)
}
