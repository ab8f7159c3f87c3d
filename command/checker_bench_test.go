package command_test

import (
	"context"
	"strconv"
	"sync/atomic"
	"testing"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/command"
	"github.com/factum-go/factum/eventstore"
)

// BenchmarkCheckerNew checks requests never seen before, the common case:
// every check records the request and answers without the store.
func BenchmarkCheckerNew(b *testing.B) {
	c, err := command.NewRequestChecker(eventstore.NewMemory(), command.CheckerConfig{})
	if err != nil {
		b.Fatal(err)
	}
	named := factum.NamedAggregate{Context: "c", Aggregate: "a"}
	ids := make([]factum.AggregateID, 10_000)
	for i := range ids {
		ids[i] = named.WithID("agg-" + strconv.Itoa(i))
	}
	reqs := make([]string, 1<<16)
	for i := range reqs {
		reqs[i] = factum.NewID()
	}
	ctx := context.Background()
	var next atomic.Int64
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			i := int(next.Add(1))
			// The request IDs repeat after 65,536 checks, under other
			// aggregates, so the pairs stay new.
			if _, dup, err := c.Check(ctx, ids[i%len(ids)], reqs[i%len(reqs)]+strconv.Itoa(i/len(reqs))); err != nil || dup {
				b.Fatalf("dup=%v err=%v", dup, err)
			}
		}
	})
}

// BenchmarkCheckerNewSerial checks fresh requests from one goroutine with
// the keys built beforehand, so the figure is the check alone: hashing,
// the shard lock and the filter's memory (which, at a million entries,
// no cache holds).
func BenchmarkCheckerNewSerial(b *testing.B) {
	c, err := command.NewRequestChecker(eventstore.NewMemory(), command.CheckerConfig{})
	if err != nil {
		b.Fatal(err)
	}
	named := factum.NamedAggregate{Context: "c", Aggregate: "a"}
	const n = 1 << 20
	ids := make([]factum.AggregateID, 10_000)
	for i := range ids {
		ids[i] = named.WithID("agg-" + strconv.Itoa(i))
	}
	reqs := make([]string, n)
	for i := range reqs {
		reqs[i] = factum.NewID()
	}
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	i := 0
	for b.Loop() {
		if i == n {
			b.StopTimer() // every pair was recorded once: start over
			c, _ = command.NewRequestChecker(eventstore.NewMemory(), command.CheckerConfig{})
			i = 0
			b.StartTimer()
		}
		if _, dup, err := c.Check(ctx, ids[i%len(ids)], reqs[i]); err != nil || dup {
			b.Fatalf("dup=%v err=%v", dup, err)
		}
		i++
	}
}
