package idempotencytest

import (
	"context"
	"runtime"
	"strconv"
	"sync/atomic"
	"testing"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/idempotency"
)

// BeginCompleter is the part of a store BenchPairs drives. Every
// idempotency.Store is one; so is a benchmark's yardstick.
type BeginCompleter interface {
	Begin(ctx context.Context, k idempotency.Key, fingerprint string) (idempotency.Record, bool, error)
	Complete(ctx context.Context, k idempotency.Key, fingerprint string, attempt uint64, response []byte) error
}

// BenchResponse is the response every pair stores: a small JSON document.
var BenchResponse = []byte(`{"order":"o-12345","status":"created","total":"42.00","currency":"EUR"}`)

// benchFingerprint has the shape of DefaultFingerprint's output.
const benchFingerprint = "sha256:3f79bb7b435b05321651daefd374cdc681dc06faa65e374e38337b88ca046dea"

// BenchPairs measures Begin+Complete pairs on fresh keys, the work of one
// protected request, from the given number of goroutines, and reports
// pairs/s. Keys are built before the clock starts, and are unique to the
// call, so runs may share a database.
func BenchPairs(b *testing.B, s BeginCompleter, goroutines int) {
	b.Helper()
	keys := newBenchKeys()
	ctx := context.Background()
	pair := func() {
		k := keys.key()
		rec, created, err := s.Begin(ctx, k, benchFingerprint)
		if err != nil || !created {
			b.Fatalf("Begin(%s): created=%v %v", k, created, err)
		}
		if err := s.Complete(ctx, k, benchFingerprint, rec.Attempt, BenchResponse); err != nil {
			b.Fatalf("Complete(%s): %v", k, err)
		}
	}
	b.ReportAllocs()
	b.ResetTimer()
	if goroutines <= 1 {
		for b.Loop() {
			pair()
		}
	} else {
		b.SetParallelism(max(1, goroutines/runtime.GOMAXPROCS(0)))
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				pair()
			}
		})
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "pairs/s")
}

// benchKeys hands out distinct keys without allocating per operation.
type benchKeys struct {
	values  []string
	tenants []string
	next    atomic.Uint64
}

func newBenchKeys() *benchKeys {
	run := factum.NewID()[24:] // the random tail of a UUIDv7
	k := &benchKeys{values: make([]string, 1<<18), tenants: make([]string, 256)}
	for i := range k.values {
		k.values[i] = "req-" + strconv.Itoa(i)
	}
	for i := range k.tenants {
		k.tenants[i] = "bench-" + run + "-" + strconv.Itoa(i)
	}
	return k
}

func (k *benchKeys) key() idempotency.Key {
	n := k.next.Add(1)
	v, t := n%uint64(len(k.values)), n/uint64(len(k.values))
	return idempotency.Key{Tenant: k.tenants[t%uint64(len(k.tenants))], Operation: "POST /orders", Value: k.values[v]}
}
