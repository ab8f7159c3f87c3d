package aggregate_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/aggregate"
	"github.com/factum-go/factum/codec"
	"github.com/factum-go/factum/command"
)

// waitSink hands each command's signal to the caller waiting for it.
type waitSink struct{ m sync.Map } // command ID -> chan factum.Signal

func (s *waitSink) Signal(sig factum.Signal) {
	if ch, ok := s.m.LoadAndDelete(sig.CommandID); ok {
		ch.(chan factum.Signal) <- sig
	}
}

// BenchmarkHotAggregate runs 64 callers sending to one aggregate through
// a dispatcher, each waiting for its command's signal before sending the
// next, over a store whose every append and group takes 1 ms, as a
// commit does (commit=1ms), or no time (commit=0, the CPU the runs
// cost): with runs (the default MaxRun) and one command at a time.
func BenchmarkHotAggregate(b *testing.B) {
	for _, bc := range []struct {
		name   string
		maxRun int
		delay  time.Duration
	}{{"commit=1ms/runs", 0, time.Millisecond}, {"commit=1ms/one", 1, time.Millisecond}, {"commit=0/runs", 0, 0}, {"commit=0/one", 1, 0}} {
		b.Run(bc.name, func(b *testing.B) {
			store := newGroupStore()
			store.delay = bc.delay
			p, err := runTallies(&claims{owner: map[string]string{}}).NewExecutor(aggregate.ExecutorConfig{Store: store, Codec: codec.NewRegistry()})
			if err != nil {
				b.Fatal(err)
			}
			sink := &waitSink{}
			d, err := command.NewDispatcher(p.(command.Executor), sink, command.DispatcherConfig{MaxRun: bc.maxRun})
			if err != nil {
				b.Fatal(err)
			}
			d.Start(context.Background())
			b.Cleanup(func() { _ = d.Shutdown(context.Background()) })
			send := func(body any) {
				c := tallyCmd("hot", body)
				ch := make(chan factum.Signal, 1)
				sink.m.Store(c.ID, ch)
				if err := d.Send(context.Background(), c); err != nil {
					b.Error(err)
					return
				}
				if sig := <-ch; sig.Code != factum.CodeOk {
					b.Errorf("%s: %s", sig.Code, sig.Message)
				}
			}
			send(openTally{})
			start := time.Now()
			var wg sync.WaitGroup
			var mu sync.Mutex
			left := b.N
			b.ResetTimer()
			for range 64 {
				wg.Go(func() {
					for {
						mu.Lock()
						if left == 0 {
							mu.Unlock()
							return
						}
						left--
						mu.Unlock()
						send(addTally{Qty: 0})
					}
				})
			}
			wg.Wait()
			b.StopTimer()
			b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "commands/s")
			groups, _ := store.counts()
			n := 0
			for _, g := range groups {
				n += g
			}
			if len(groups) > 0 {
				b.ReportMetric(float64(n)/float64(len(groups)), "streams/group")
			}
		})
	}
}
