package aggregate_test

import (
	"context"
	"testing"

	"github.com/google/uuid"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/aggregate"
	"github.com/factum-go/factum/codec"
	"github.com/factum-go/factum/eventstore"
)

type tally struct{ N int }
type bump struct{ Times int }
type bumped struct{ I int }

var tallies = aggregate.New[tally]("bank", "tally",
	aggregate.Source(func(s *tally, _ bumped) { s.N++ }),
	aggregate.Handle(func(_ context.Context, _ tally, b bump) ([]any, error) {
		events := make([]any, b.Times)
		for i := range events {
			events[i] = bumped{I: i}
		}
		return events, nil
	}, aggregate.AllowCreate()),
)

// The stream and its events get distinct UUIDv7 IDs, increasing in event
// order and stamped with the stream's create time, which is also the
// PROCESSED signal's time. Streams with more events than the processor's
// inline ID buffer take the other path.
func TestStreamIdentities(t *testing.T) {
	store := eventstore.NewMemory()
	p, err := tallies.NewExecutor(aggregate.ExecutorConfig{Store: store, Codec: codec.NewRegistry()})
	if err != nil {
		t.Fatal(err)
	}
	id := tallies.ID("t-1")
	seen := map[string]bool{}
	for v, times := range []int{1, 3, 7, 8, 20} {
		c := factum.NewCommand(id, bump{Times: times})
		c.AggregateID.Tenant = factum.DefaultTenant
		c.AllowCreate = true // the gateway sets the marker from the definition
		sig := p.Process(context.Background(), &c)
		if !sig.Succeeded() || sig.AggregateVersion != v+1 || len(sig.EventNames) != times {
			t.Fatalf("command %d: %+v", v, sig)
		}
		s, err := store.Lookup(context.Background(), id, c.ID)
		if err != nil {
			t.Fatal(err)
		}
		if !sig.SignalTime.Equal(s.CreateTime) {
			t.Fatalf("signal time %v, stream create time %v", sig.SignalTime, s.CreateTime)
		}
		ids := []string{s.ID}
		for _, e := range s.Events {
			ids = append(ids, e.ID)
		}
		for i, x := range ids {
			u, err := uuid.Parse(x)
			if err != nil || u.Version() != 7 {
				t.Fatalf("ID %q is not a UUIDv7 (%v)", x, err)
			}
			if seen[x] {
				t.Fatalf("ID %s used twice", x)
			}
			seen[x] = true
			if i > 0 && x <= ids[i-1] {
				t.Fatalf("event ID %s does not follow %s", x, ids[i-1])
			}
			var ms int64
			for _, b := range u[:6] {
				ms = ms<<8 | int64(b)
			}
			if ms < s.CreateTime.UnixMilli() {
				t.Fatalf("ID %s carries %d ms, before the stream's create time %d", x, ms, s.CreateTime.UnixMilli())
			}
		}
	}
}
