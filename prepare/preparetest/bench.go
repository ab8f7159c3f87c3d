package preparetest

import (
	"context"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/prepare"
)

// BenchPrepareRollback measures a reservation's round trip through
// backend: Prepare of a fresh key, then RollbackValue of it, as
// UsingPrepare does when its function fails. b.N pairs are spread over the
// given number of goroutines; the "pairs/s" metric is the throughput.
func BenchPrepareRollback(b *testing.B, backend prepare.Backend, goroutines int) {
	k, prefix := benchKey(b, backend)
	ctx := context.Background()
	benchRun(b, goroutines, "pairs/s", func(i int64) {
		key := prefix + strconv.FormatInt(i, 10)
		v := benchUser{UserID: key}
		ok, err := k.Prepare(ctx, key, prepare.Forever(v))
		if err != nil || !ok {
			b.Errorf("Prepare(%q) = %v, %v", key, ok, err)
			return
		}
		if ok, err := k.RollbackValue(ctx, key, v); err != nil || !ok {
			b.Errorf("RollbackValue(%q) = %v, %v", key, ok, err)
		}
	})
}

// BenchPrepare measures Prepare alone, of fresh keys reserved for one
// minute, over the given number of goroutines; the "ops/s" metric is the
// throughput. The reservations are left to expire.
func BenchPrepare(b *testing.B, backend prepare.Backend, goroutines int) {
	k, prefix := benchKey(b, backend)
	ctx := context.Background()
	expiresAt := time.Now().Add(time.Minute)
	benchRun(b, goroutines, "ops/s", func(i int64) {
		key := prefix + strconv.FormatInt(i, 10)
		ok, err := k.Prepare(ctx, key, prepare.ExpiresAt(benchUser{UserID: key}, expiresAt))
		if err != nil || !ok {
			b.Errorf("Prepare(%q) = %v, %v", key, ok, err)
		}
	})
}

// benchUser is a typical small value: its JSON is about 30 bytes.
type benchUser struct {
	UserID string `json:"userId"`
}

func benchKey(b *testing.B, backend prepare.Backend) (*prepare.Key[benchUser], string) {
	b.Helper()
	k, err := prepare.NewKey[benchUser]("bench", backend)
	if err != nil {
		b.Fatal(err)
	}
	// Keys unique to this run, of the length of a typical username.
	return k, "u" + factum.NewID()[24:] + "-"
}

// benchRun runs op(1..b.N) on exactly goroutines goroutines and reports
// the throughput under unit.
func benchRun(b *testing.B, goroutines int, unit string, op func(i int64)) {
	b.Helper()
	b.ReportAllocs()
	var next atomic.Int64
	var wg sync.WaitGroup
	b.ResetTimer()
	for range goroutines {
		wg.Go(func() {
			for i := next.Add(1); i <= int64(b.N); i = next.Add(1) {
				op(i)
			}
		})
	}
	wg.Wait()
	b.StopTimer()
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), unit)
}
