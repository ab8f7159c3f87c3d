package nats

import (
	"context"
	"fmt"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/command"
	"github.com/factum-go/factum/engine"
	"github.com/factum-go/factum/eventstore"
)

// benchWorld is a world on the machine's server when FACTUM_NATS_URL is
// set, on a server in process otherwise.
func benchWorld(b *testing.B) *world {
	if os.Getenv("FACTUM_NATS_URL") != "" {
		return sharedWorld(b, DefaultPartitions, DefaultLease)
	}
	return inProcessWorld(b, DefaultPartitions, DefaultLease)
}

// BenchmarkCommands measures commands per second and the latency at
// PROCESSED, on a memory store, of: today's path (one instance, the
// in-process dispatcher); one instance on the NATS bus owning every
// partition (LocalFirst); the same with every command through JetStream
// (LocalNever); and two and three instances, commands sent through the
// first, so that a half and two thirds of them cross to another instance.
// Run the cases in one run and compare ratios: the machine is shared.
func BenchmarkCommands(b *testing.B) {
	for _, clients := range []int{1, 16} {
		b.Run(fmt.Sprintf("clients=%d", clients), func(b *testing.B) {
			b.Run("today", func(b *testing.B) {
				e, err := engine.New(engine.Config{Store: eventstore.NewMemory()}, tallyType("shop"))
				if err != nil {
					b.Fatal(err)
				}
				if err := e.Start(context.Background()); err != nil {
					b.Fatal(err)
				}
				b.Cleanup(func() { _ = e.Shutdown(context.Background()) })
				benchSend(b, clients, e, nil)
			})
			for _, tc := range []struct {
				name      string
				instances int
				local     LocalMode
			}{
				{"all-local", 1, LocalFirst},
				{"all-jetstream", 1, LocalNever},
				{"crossing-2", 2, LocalFirst},
				{"crossing-3", 3, LocalFirst},
			} {
				b.Run(tc.name, func(b *testing.B) {
					f := newFleet(b, benchWorld(b), tc.local)
					f.noProbe = true
					var first *engine.Engine
					for i := range tc.instances {
						e := f.start(fmt.Sprintf("i%d", i))
						if i == 0 {
							first = e
						}
					}
					f.balanced()
					benchSend(b, clients, first, func(id string) bool { return f.owner(id) != "i0" })
				})
			}
		})
	}
}

// cpuTime returns the CPU time this process has used, every thread.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// benchSend sends b.N commands through e from clients goroutines, over
// 256 aggregates, each waiting for PROCESSED, and reports commands/s, the
// p50 and p99 latencies and the share of commands that crossed.
func benchSend(b *testing.B, clients int, e *engine.Engine, crosses func(id string) bool) {
	const aggregates = 256
	ids := make([]string, aggregates)
	crossing := 0
	for i := range ids {
		ids[i] = fmt.Sprintf("agg-%d", i)
		if crosses != nil && crosses(ids[i]) {
			crossing++
		}
	}
	named := factum.NamedAggregate{Context: "shop", Aggregate: "tally"}
	lat := make([]time.Duration, b.N)
	var next atomic.Int64
	var failed atomic.Value
	b.ReportAllocs()
	b.ResetTimer()
	cpu0 := cpuTime()
	start := time.Now()
	var wg sync.WaitGroup
	for range clients {
		wg.Go(func() {
			for {
				i := int(next.Add(1) - 1)
				if i >= b.N {
					return
				}
				cmd := factum.NewCommand(named.WithID(ids[i%aggregates]), addN{N: 1})
				t0 := time.Now()
				if _, err := e.Gateway().SendAndWait(context.Background(), cmd, command.Wait(factum.StageProcessed)); err != nil {
					failed.Store(err)
					return
				}
				lat[i] = time.Since(t0)
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	cpu := cpuTime() - cpu0
	b.StopTimer()
	if err, _ := failed.Load().(error); err != nil {
		b.Fatal(err)
	}
	slices.Sort(lat)
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "cmd/s")
	b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N), "cpu-ns/op")
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds())/1000, "p99-ms")
	b.ReportMetric(100*float64(crossing)/aggregates, "crossing-%")
}
