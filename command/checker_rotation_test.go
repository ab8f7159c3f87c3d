package command_test

import (
	"context"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/command"
	"github.com/factum-go/factum/eventstore"
)

// checks runs Check for each request and returns how many store lookups
// ("maybe seen") they caused.
func checks(t *testing.T, c *command.RequestChecker, store *countingStore, id factum.AggregateID, reqs ...string) int64 {
	t.Helper()
	before := store.lookups.Load()
	for _, r := range reqs {
		if _, dup, err := c.Check(context.Background(), id, r); err != nil || dup {
			t.Fatalf("check %s: dup=%v err=%v (nothing was appended)", r, dup, err)
		}
	}
	return store.lookups.Load() - before
}

func fresh(prefix string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = prefix + strconv.Itoa(i)
	}
	return out
}

// A full filter becomes the previous one and is still consulted; it is
// forgotten at the rotation after.
func TestCheckerRotation(t *testing.T) {
	store := &countingStore{Store: eventstore.NewMemory()}
	// A rate this low makes a false positive among these few thousand
	// checks practically impossible, so lookups count true repeats only.
	c, err := command.NewRequestChecker(store, command.CheckerConfig{Capacity: 5000, FalsePositiveRate: 1e-12})
	if err != nil {
		t.Fatal(err)
	}
	id := factum.NamedAggregate{Context: "c", Aggregate: "a"}.WithID("rot")
	if n := checks(t, c, store, id, "first"); n != 0 {
		t.Fatalf("a new request caused %d lookups", n)
	}
	if n := checks(t, c, store, id, fresh("fill-1-", 4999)...); n != 0 {
		t.Fatalf("new requests caused %d lookups", n)
	}
	// The filter is full: this check rotates it and finds "first" in the
	// previous filter (and records it in the new current one).
	if n := checks(t, c, store, id, "first"); n != 1 {
		t.Fatalf("a repeat after one rotation caused %d lookups, want 1", n)
	}
	if n := checks(t, c, store, id, fresh("fill-2-", 4999)...); n != 0 {
		t.Fatalf("new requests caused %d lookups", n)
	}
	if n := checks(t, c, store, id, fresh("fill-3-", 5000)...); n != 0 {
		t.Fatalf("new requests caused %d lookups", n)
	}
	// Two rotations since "first" was last recorded: forgotten.
	if n := checks(t, c, store, id, "first"); n != 0 {
		t.Fatalf("a request two rotations old caused %d lookups, want 0 (forgotten)", n)
	}
}

// A filter whose window passed rotates even when not full (a shard looks
// at the clock every 64 entries).
func TestCheckerWindowRotation(t *testing.T) {
	store := &countingStore{Store: eventstore.NewMemory()}
	c, err := command.NewRequestChecker(store, command.CheckerConfig{Capacity: 5000, FalsePositiveRate: 1e-12, Window: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	id := factum.NamedAggregate{Context: "c", Aggregate: "a"}.WithID("win")
	checks(t, c, store, id, "old")
	checks(t, c, store, id, fresh("a-", 63)...)
	time.Sleep(5 * time.Millisecond)
	if n := checks(t, c, store, id, "old"); n != 1 { // rotates, finds it in prev
		t.Fatalf("a request one window old caused %d lookups, want 1", n)
	}
	checks(t, c, store, id, fresh("b-", 63)...)
	time.Sleep(5 * time.Millisecond)
	checks(t, c, store, id, fresh("c-", 64)...) // rotates at the first
	time.Sleep(5 * time.Millisecond)
	checks(t, c, store, id, fresh("d-", 64)...) // and again: "old" is gone
	if n := checks(t, c, store, id, "old"); n != 0 {
		t.Fatalf("a request two windows old caused %d lookups, want 0", n)
	}
}

// With the default capacity the filter is sharded; check-and-add stays
// atomic per request: of 32 goroutines checking the same 300 new requests,
// exactly one sees each unseen.
func TestCheckerShardedAtomic(t *testing.T) {
	store := &countingStore{Store: eventstore.NewMemory()}
	c, err := command.NewRequestChecker(store, command.CheckerConfig{FalsePositiveRate: 1e-12})
	if err != nil {
		t.Fatal(err)
	}
	named := factum.NamedAggregate{Context: "c", Aggregate: "a"}
	reqs := fresh("req-", 300)
	const workers = 32
	var wg sync.WaitGroup
	start := make(chan struct{})
	for w := range workers {
		wg.Go(func() {
			<-start
			for i := range reqs {
				r := reqs[(i+w*7)%len(reqs)]
				if _, dup, err := c.Check(context.Background(), named.WithID("agg-"+r[len(r)-1:]), r); err != nil || dup {
					t.Errorf("dup=%v err=%v", dup, err)
				}
			}
		})
	}
	close(start)
	wg.Wait()
	if n := store.lookups.Load(); n != int64(len(reqs)*(workers-1)) {
		t.Fatalf("%d store lookups, want %d (each request unseen exactly once)", n, len(reqs)*(workers-1))
	}
}
