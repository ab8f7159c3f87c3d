package idempotency_test

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/factum-go/factum/idempotency"
)

// benchKeys hands out distinct keys without allocating per operation, so
// that the benchmarks measure the stores, not key formatting.
type benchKeys struct {
	values  []string
	tenants []string
	next    atomic.Uint64
}

func newBenchKeys() *benchKeys {
	k := &benchKeys{values: make([]string, 1<<18), tenants: make([]string, 256)}
	for i := range k.values {
		k.values[i] = "req-" + strconv.Itoa(i)
	}
	for i := range k.tenants {
		k.tenants[i] = "tenant-" + strconv.Itoa(i)
	}
	return k
}

func (k *benchKeys) key() idempotency.Key {
	n := k.next.Add(1)
	v, t := n%uint64(len(k.values)), n/uint64(len(k.values))
	return idempotency.Key{Tenant: k.tenants[t%uint64(len(k.tenants))], Operation: "POST /orders", Value: k.values[v]}
}

var benchResponse = []byte(`{"order":"o-12345","status":"created","total":"42.00","currency":"EUR"}`)

const benchFP = "sha256:3f79bb7b435b05321651daefd374cdc681dc06faa65e374e38337b88ca046dea"

// pairStore is what one Begin+Complete pair needs.
type pairStore interface {
	Begin(ctx context.Context, k idempotency.Key, fp string) (idempotency.Record, bool, error)
	Complete(ctx context.Context, k idempotency.Key, fp string, attempt uint64, resp []byte) error
}

// mutexMap is the yardstick: a bare mutex-guarded map doing the same two
// writes (claim if absent, then store the response), with none of the
// store's validation, fencing checks, sharding or copying.
type mutexMap struct {
	mu      sync.Mutex
	m       map[idempotency.Key]idempotency.Record
	attempt uint64
}

var errTaken = errors.New("taken")

func (b *mutexMap) Begin(_ context.Context, k idempotency.Key, fp string) (idempotency.Record, bool, error) {
	now := time.Now()
	b.mu.Lock()
	defer b.mu.Unlock()
	if r, ok := b.m[k]; ok {
		return r, false, errTaken
	}
	b.attempt++
	r := idempotency.Record{State: idempotency.StateInProgress, Fingerprint: fp, ExpiresAt: now.Add(time.Minute), Attempt: b.attempt}
	b.m[k] = r
	return r, true, nil
}

func (b *mutexMap) Complete(_ context.Context, k idempotency.Key, _ string, attempt uint64, resp []byte) error {
	now := time.Now()
	b.mu.Lock()
	defer b.mu.Unlock()
	r := b.m[k]
	if r.Attempt != attempt {
		return errTaken
	}
	r.State, r.Response, r.ExpiresAt = idempotency.StateDone, resp, now.Add(24*time.Hour)
	b.m[k] = r
	return nil
}

// benchPairs runs Begin+Complete pairs on fresh keys from the given number
// of goroutines and reports pairs per second.
func benchPairs(b *testing.B, s pairStore, goroutines int) {
	b.Helper()
	keys := newBenchKeys()
	ctx := context.Background()
	pair := func() {
		k := keys.key()
		rec, created, err := s.Begin(ctx, k, benchFP)
		if err != nil || !created {
			b.Fatalf("Begin: %v %v", created, err)
		}
		if err := s.Complete(ctx, k, benchFP, rec.Attempt, benchResponse); err != nil {
			b.Fatalf("Complete: %v", err)
		}
	}
	b.ReportAllocs()
	b.ResetTimer()
	if goroutines == 1 {
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

// BenchmarkMemoryBeginComplete compares the memory store with a bare
// mutex-guarded map, in the same run, at 1 and 32 goroutines.
func BenchmarkMemoryBeginComplete(b *testing.B) {
	for _, g := range []int{1, 32} {
		b.Run(fmt.Sprintf("store/goroutines=%d", g), func(b *testing.B) {
			m, err := idempotency.NewMemory(idempotency.MemoryOptions{})
			if err != nil {
				b.Fatal(err)
			}
			benchPairs(b, m, g)
		})
		b.Run(fmt.Sprintf("mutex-map/goroutines=%d", g), func(b *testing.B) {
			benchPairs(b, &mutexMap{m: make(map[idempotency.Key]idempotency.Record)}, g)
		})
	}
}
