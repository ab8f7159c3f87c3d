package eventstore_test

import (
	"context"
	"fmt"
	"strconv"
	"sync/atomic"
	"testing"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/eventstore"
)

var benchBody = []byte(`{"sku":"sku-1","qty":2}`)

func benchStream(id factum.AggregateID, version int) *factum.EventStream {
	v := strconv.Itoa(version)
	return &factum.EventStream{
		ID: "s-" + v, AggregateID: id, Version: version,
		CommandID: "c-" + v, RequestID: "r-" + v,
		Events: []factum.DomainEvent{{ID: "e-" + v, Name: "item_added", Sequence: 1, IsLast: true, Body: benchBody}},
	}
}

// BenchmarkMemoryAppendOneAggregate appends successive versions to one
// aggregate.
func BenchmarkMemoryAppendOneAggregate(b *testing.B) {
	st := eventstore.NewMemory()
	id := factum.NamedAggregate{Context: "bench", Aggregate: "cart"}.WithID("one")
	ctx := context.Background()
	b.ReportAllocs()
	v := 0
	for b.Loop() {
		v++
		if err := st.Append(ctx, benchStream(id, v)); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkMemoryAppendParallel appends to many aggregates from all
// goroutines at once.
func BenchmarkMemoryAppendParallel(b *testing.B) {
	st := eventstore.NewMemory()
	named := factum.NamedAggregate{Context: "bench", Aggregate: "cart"}
	ctx := context.Background()
	var next atomic.Int64
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		id := named.WithID(fmt.Sprintf("agg-%d", next.Add(1)))
		v := 0
		for pb.Next() {
			v++
			if v > 100 { // move on to a fresh aggregate every 100 versions
				id = named.WithID(fmt.Sprintf("agg-%d", next.Add(1)))
				v = 1
			}
			if err := st.Append(ctx, benchStream(id, v)); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkMemoryLoad1000 loads an aggregate of 1,000 streams.
func BenchmarkMemoryLoad1000(b *testing.B) {
	st := eventstore.NewMemory()
	id := factum.NamedAggregate{Context: "bench", Aggregate: "cart"}.WithID("big")
	ctx := context.Background()
	for v := 1; v <= 1000; v++ {
		if err := st.Append(ctx, benchStream(id, v)); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportAllocs()
	for b.Loop() {
		got, err := st.Load(ctx, id, 1, eventstore.MaxVersion)
		if err != nil || len(got) != 1000 {
			b.Fatal(len(got), err)
		}
	}
}
