package aggregate_test

import (
	"context"
	"slices"
	"testing"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/aggregate"
	"github.com/factum-go/factum/codec"
	"github.com/factum-go/factum/eventstore"
)

// lookups records each cache lookup a processor reports.
type lookups []bool

func (l *lookups) ObserveCache(hit bool) { *l = append(*l, hit) }

// The observer in a command's context hears of every attempt's lookup: a
// new aggregate is a miss, the next command a hit, a state another
// processor moved a hit whose append conflicts and whose retry loads
// again, and with the cache off every lookup is a miss.
func TestTheCacheObserverHearsEveryLookup(t *testing.T) {
	for _, tc := range []struct {
		name      string
		cacheSize int
		want      []bool // p2: create, again, after p1 appended
	}{
		{"cached", 0, []bool{false, true, true, false}},
		{"cache off", -1, []bool{false, false, false}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			def := bound(func() []aggregate.Effect { return nil })
			mem := eventstore.NewMemory()
			p1, err := def.NewExecutor(aggregate.ExecutorConfig{Store: mem, Codec: codec.NewRegistry(), CacheSize: tc.cacheSize})
			if err != nil {
				t.Fatal(err)
			}
			p2, err := def.NewExecutor(aggregate.ExecutorConfig{Store: mem, Codec: codec.NewRegistry(), CacheSize: tc.cacheSize, Backoff: 1})
			if err != nil {
				t.Fatal(err)
			}
			id := def.ID("b-1").WithTenant(factum.DefaultTenant)
			var got lookups
			ctx := aggregate.WithCacheObserver(context.Background(), &got)
			send := func(p aggregate.Executor, ctx context.Context) {
				t.Helper()
				cmd := factum.NewCommand(id, reserve{})
				cmd.AllowCreate = true
				if sig := p.Process(ctx, &cmd); !sig.Succeeded() {
					t.Fatalf("%+v", sig)
				}
			}
			send(p2, ctx)
			send(p2, ctx)
			send(p1, context.Background()) // moves the aggregate behind p2's cache
			send(p2, ctx)
			if !slices.Equal(got, tc.want) {
				t.Fatalf("lookups %v, want %v", got, tc.want)
			}
		})
	}
}

func TestNoCacheObserverInAPlainContext(t *testing.T) {
	if o := aggregate.CacheObserverFrom(context.Background()); o != nil {
		t.Fatalf("observer %v", o)
	}
}
