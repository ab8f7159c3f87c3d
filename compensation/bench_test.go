package compensation_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/compensation"
	"github.com/factum-go/factum/event"
)

// benchBackends are the stores the benchmarks run on (PostgreSQL when
// FACTUM_POSTGRES_URL is set).
func benchBackends() []backend { return []backend{memoryBackend(), sqliteBackend(), postgresBackend()} }

// syntheticFailure is a failure of the totals function on the event with
// the given ID in stream s.
func syntheticFailure(s factum.EventStream, eventID string) event.Failure {
	return event.Failure{Function: totalsFn, Stage: factum.StageProjected, Stream: s, EventID: eventID,
		Err: errBoom, Attempts: 3, Time: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)}
}

// orderStream places one order and returns its stream.
func orderStream(b *testing.B, f *fixture) factum.EventStream {
	b.Helper()
	f.place("o-bench", 1)
	streams, err := f.store.Load(context.Background(), orders.ID("o-bench"), 1, 1)
	if err != nil || len(streams) != 1 {
		b.Fatal(streams, err)
	}
	return streams[0]
}

// BenchmarkRecordFailure measures RecordFailure: one create command through
// the gateway, waited for until its stream is appended (PROCESSED). Each
// op records a new execution.
func BenchmarkRecordFailure(b *testing.B) {
	for _, be := range benchBackends() {
		b.Run(be.name, func(b *testing.B) {
			f := newFixture(b, be.open(b), options{})
			s := orderStream(b, f)
			ctx := context.Background()
			b.ReportAllocs()
			b.ResetTimer()
			for i := range b.N {
				if err := f.comp.RecordFailure(ctx, syntheticFailure(s, fmt.Sprintf("ev-%d", i))); err != nil {
					b.Fatal(err)
				}
			}
			b.StopTimer()
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "records/s")
		})
		b.Run(be.name+"/parallel", func(b *testing.B) {
			f := newFixture(b, be.open(b), options{})
			s := orderStream(b, f)
			ctx := context.Background()
			b.ReportAllocs()
			b.SetParallelism(8)
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					if err := f.comp.RecordFailure(ctx, syntheticFailure(s, factum.NewID())); err != nil {
						b.Error(err)
						return
					}
				}
			})
			b.StopTimer()
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "records/s")
		})
	}
}

// BenchmarkSchedulerRetry measures the scheduler's retries: b.N due
// executions, retried by passes of one scheduler (batches of 1000, 4 at a
// time) until all succeeded. One op is one retry: the due query
// (amortised), the prepare and its append, loading the stream, running the
// function, and the success and its append.
func BenchmarkSchedulerRetry(b *testing.B) {
	for _, be := range benchBackends() {
		b.Run(be.name, func(b *testing.B) {
			f := newFixture(b, be.open(b), options{})
			s := orderStream(b, f)
			ctx := context.Background()
			for i := range b.N {
				if err := f.comp.RecordFailure(ctx, syntheticFailure(s, fmt.Sprintf("ev-%d", i))); err != nil {
					b.Fatal(err)
				}
			}
			eventually(b, "executions in the query store", func() (bool, string) {
				c, err := f.svc.Counts(ctx)
				return err == nil && c.Failed == int64(b.N), fmt.Sprintf("%+v %v", c, err)
			})
			f.clock.Advance(compensation.DefaultMinBackoff)
			sched := f.comp.NewScheduler(compensation.SchedulerConfig{BatchSize: 1000, Concurrency: 4})
			b.ReportAllocs()
			b.ResetTimer()
			for sched.Stats().Succeeded < int64(b.N) {
				rep, err := sched.RunOnce(ctx)
				if err != nil || rep.Errors > 0 {
					b.Fatal(rep, err)
				}
				if len(rep.Attempts) == 0 {
					// Every due snapshot lags behind this scheduler's
					// own retries: wait for the snapshotter, as Run does.
					time.Sleep(time.Millisecond)
				}
			}
			b.StopTimer()
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "retries/s")
		})
	}
}
