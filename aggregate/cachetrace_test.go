package aggregate_test

import (
	"context"
	"slices"
	"testing"
	"time"

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

// retries records each retry a RetryObserver is told of, and counts the
// lookups it is told of.
type retries struct {
	lookups  int
	attempts []int
}

func (r *retries) ObserveCache(bool)        { r.lookups++ }
func (r *retries) ObserveRetry(attempt int) { r.attempts = append(r.attempts, attempt) }

// The RetryObserver in a command's context hears of each retry, with the
// number of the attempt about to start, from the executor's default
// Retry and from a Retry middleware alike; a command that succeeds at
// once has none.
func TestTheRetryObserverHearsEachRetry(t *testing.T) {
	viaMiddleware := aggregate.ExecutorConfig{Retries: -1, Middleware: []aggregate.Middleware{aggregate.Retry(aggregate.RetryConfig{Backoff: time.Microsecond})}}
	for _, tc := range []struct {
		name     string
		cfg      aggregate.ExecutorConfig
		failures int
		want     []int
	}{
		{"default retry", aggregate.ExecutorConfig{Backoff: time.Microsecond}, 2, []int{2, 3}},
		{"retry middleware", viaMiddleware, 2, []int{2, 3}},
		{"no failure", aggregate.ExecutorConfig{Backoff: time.Microsecond}, 0, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			store := &faultyStore{Store: eventstore.NewMemory(), fail: func(n int) (error, bool) {
				if n <= tc.failures {
					return factum.NewError(factum.CodeEventVersionConflict, "injected"), false
				}
				return nil, false
			}}
			p := newProc(t, store, tc.cfg)
			var got retries
			cmd := factum.NewCommand(accounts.ID("a-1").WithTenant(factum.DefaultTenant), deposit{Amount: 1})
			cmd.AllowCreate = true
			if sig := p.Process(aggregate.WithCacheObserver(context.Background(), &got), &cmd); !sig.Succeeded() {
				t.Fatalf("%+v", sig)
			}
			if !slices.Equal(got.attempts, tc.want) || got.lookups != len(tc.want)+1 {
				t.Fatalf("retries %v after %d lookups, want %v after %d", got.attempts, got.lookups, tc.want, len(tc.want)+1)
			}
		})
	}
}
