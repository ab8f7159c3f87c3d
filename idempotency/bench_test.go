package idempotency_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/factum-go/factum/idempotency"
	"github.com/factum-go/factum/idempotency/idempotencytest"
)

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

// BenchmarkMemoryBeginComplete compares the memory store with a bare
// mutex-guarded map, in the same run, at 1 and 32 goroutines. Run it with
// a fixed count (-benchtime 500000x) so both grow maps of the same size.
func BenchmarkMemoryBeginComplete(b *testing.B) {
	for _, g := range []int{1, 32} {
		b.Run(fmt.Sprintf("store/goroutines=%d", g), func(b *testing.B) {
			m, err := idempotency.NewMemory(idempotency.MemoryConfig{})
			if err != nil {
				b.Fatal(err)
			}
			idempotencytest.BenchPairs(b, m, g)
		})
		b.Run(fmt.Sprintf("mutex-map/goroutines=%d", g), func(b *testing.B) {
			idempotencytest.BenchPairs(b, &mutexMap{m: make(map[idempotency.Key]idempotency.Record)}, g)
		})
	}
}
