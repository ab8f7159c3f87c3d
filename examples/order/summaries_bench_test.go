package order_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/command"
	"github.com/factum-go/factum/engine"
	"github.com/factum-go/factum/event"
	"github.com/factum-go/factum/examples/order"
	"github.com/factum-go/factum/projection"
)

// benchLogStreams is how many order streams the throughput benchmark
// projects per iteration: half OrderPlaced, half OrderConfirmed.
const benchLogStreams = 2000

// appendOrderLog appends n order streams to the backend's event store of
// the order context, from 8 writers (the store coalesces them): n/2
// orders, each placed then confirmed. It returns the log.
func appendOrderLog(b *testing.B, bk sqlBackend, n int) event.LogReader {
	b.Helper()
	ctx := context.Background()
	es, err := bk.storage.EventStore(ctx, order.Context)
	if err != nil {
		b.Fatal(err)
	}
	log, ok := es.(event.LogReader)
	if !ok {
		b.Fatalf("%T has no global log", es)
	}
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for w := range 8 {
		wg.Go(func() {
			for i := w; i < n/2; i += 8 {
				id := order.Orders.ID(fmt.Sprintf("o-%d", i)).WithTenant(fmt.Sprintf("t-%d", i%4))
				placed, _ := json.Marshal(order.OrderPlaced{OrderID: id.ID, SKU: fmt.Sprintf("sku-%d", i%10), Qty: 1 + i%3})
				confirmed, _ := json.Marshal(order.OrderConfirmed{OrderID: id.ID})
				for v, e := range []struct {
					name string
					body []byte
				}{{"order_placed", placed}, {"order_confirmed", confirmed}} {
					s := factum.EventStream{ID: factum.NewID(), AggregateID: id, Version: v + 1, CommandID: factum.NewID(),
						RequestID: factum.NewID(), CreateTime: time.Now(),
						Events: []factum.DomainEvent{{ID: factum.NewID(), Name: e.name, Sequence: 1, IsLast: true, Body: e.body}}}
					if err := es.Append(ctx, &s); err != nil {
						errs <- err
						return
					}
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		b.Fatal(err)
	}
	return log
}

// BenchmarkSummariesProjection measures the order summaries' projection
// throughput: a runner projects a log of benchLogStreams order streams
// from the start (one read and up to three writes per stream), with one
// stream per transaction and with batches, on SQLite and PostgreSQL (the
// log in the same database, as serve has it). streams/s is the figure;
// each iteration resets the read model first, off the clock.
func BenchmarkSummariesProjection(b *testing.B) {
	for _, bk := range sqlBackends {
		b.Run(bk.name, func(b *testing.B) {
			be := bk.open(b)
			log := appendOrderLog(b, be, benchLogStreams)
			for _, batch := range []int{1, 64} {
				b.Run(fmt.Sprintf("batch=%d", batch), func(b *testing.B) {
					p, err := order.SummariesProjection()
					if err != nil {
						b.Fatal(err)
					}
					r, err := projection.NewRunner(p, projection.Config{Log: log, Store: be.store, BatchSize: batch})
					if err != nil {
						b.Fatal(err)
					}
					r.Drain() // each Run returns once the log is projected
					ctx := context.Background()
					var elapsed time.Duration
					for b.Loop() {
						b.StopTimer()
						if err := r.ResetAndReplay(ctx); err != nil {
							b.Fatal(err)
						}
						b.StartTimer()
						start := time.Now()
						if err := r.Run(ctx); err != nil {
							b.Fatal(err)
						}
						elapsed += time.Since(start)
					}
					st, err := r.Status(ctx)
					if err != nil || st.Live == nil || st.Live.Lag != 0 {
						b.Fatalf("after the runs the projection is at %+v (%v)", st.Live, err)
					}
					b.ReportMetric(float64(benchLogStreams*b.N)/elapsed.Seconds(), "streams/s")
				})
			}
		})
	}
}

// BenchmarkSummariesUnderLoad places orders from 16 concurrent callers
// through the engine, with the summaries projection as a component, and
// waits for PROCESSED (the append) or PROJECTED (the summaries'
// transaction committed). It reports the wait's p50 and p99, and, from a
// sampler reading the projection's status every 20 ms, the most streams
// the projection lagged behind the log (lag-max, and per tenth of the run
// in the log), the 99th percentile and the mean (lag-p99, lag-mean), its
// lag when the load stopped (lag-end) and how long it took then to reach
// the log's end (catchup-ms); and the rates of appends and of streams
// applied during the load (appends/s, applied/s); with one stream per
// transaction and with batches.
func BenchmarkSummariesUnderLoad(b *testing.B) {
	for _, bk := range sqlBackends {
		b.Run(bk.name, func(b *testing.B) {
			for _, batch := range []int{1, 64} {
				for _, stage := range []factum.CommandStage{factum.StageProcessed, factum.StageProjected} {
					b.Run(fmt.Sprintf("batch=%d/wait=%s", batch, stage), func(b *testing.B) {
						benchUnderLoad(b, bk.open(b), batch, stage)
					})
				}
			}
		})
	}
}

func benchUnderLoad(b *testing.B, be sqlBackend, batch int, stage factum.CommandStage) {
	p, err := order.SummariesProjection()
	if err != nil {
		b.Fatal(err)
	}
	comp := projection.NewComponent(projection.ComponentConfig{Store: be.store, Projections: []*projection.Projection{p},
		Runner: projection.Config{BatchSize: batch}})
	rt, err := engine.New(engine.Config{Storage: be.storage, Components: []engine.Component{comp}}, order.Orders)
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	if err := rt.Start(ctx); err != nil {
		b.Fatal(err)
	}
	defer func() {
		sctx, cancel := context.WithTimeout(ctx, time.Minute)
		defer cancel()
		_ = rt.Shutdown(sctx)
	}()
	gw := rt.Gateway()
	// The first order makes the projection's build and tables.
	if _, err := gw.SendAndWait(ctx, factum.NewCommand(order.Orders.ID("warm-up"), order.PlaceOrder{SKU: "sku-0", Qty: 1}), command.Wait(factum.StageProjected)); err != nil {
		b.Fatal(err)
	}
	// The sampler's lags, in order; read once it stopped.
	var lags []int64
	stop := make(chan struct{})
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		tick := time.NewTicker(20 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				return
			case <-tick.C:
			}
			st, err := comp.Status(ctx, order.Context, order.SummariesName)
			if err != nil || st.Live == nil {
				continue
			}
			lags = append(lags, int64(st.Live.Lag))
		}
	}()
	const callers = 16
	var next atomic.Int64
	lat := make([][]time.Duration, callers)
	failed := atomic.Int64{}
	run := factum.NewID()[:8]
	b.ResetTimer()
	loadStart := time.Now()
	var wg sync.WaitGroup
	for c := range callers {
		wg.Go(func() {
			for {
				i := next.Add(1) - 1
				if i >= int64(b.N) {
					return
				}
				cmd := factum.NewCommand(order.Orders.ID(fmt.Sprintf("%s-%d", run, i)).WithTenant(fmt.Sprintf("t-%d", i%4)),
					order.PlaceOrder{SKU: fmt.Sprintf("sku-%d", i%10), Qty: 1 + int(i%3)})
				start := time.Now()
				if _, err := gw.SendAndWait(ctx, cmd, command.Wait(stage)); err != nil {
					failed.Add(1)
					continue
				}
				lat[c] = append(lat[c], time.Since(start))
			}
		})
	}
	wg.Wait()
	b.StopTimer()
	loadTime := time.Since(loadStart)
	close(stop)
	<-sampled
	// How far behind the projection is when the load stops, and how long
	// it takes to reach the log's end (near zero when it kept up; the
	// wait is cut at 20 s, and then the figure is that).
	endLoad := time.Now()
	for first := true; ; first = false {
		st, err := comp.Status(ctx, order.Context, order.SummariesName)
		if err != nil {
			b.Fatal(err)
		}
		if first && st.Live != nil {
			b.ReportMetric(float64(st.Live.Lag), "lag-end")
			// Streams the projection applied while the load ran (it
			// started at the log's end), per second.
			b.ReportMetric(float64(b.N-st.Live.Lag)/loadTime.Seconds(), "applied/s")
		}
		if st.Live != nil && st.Live.Lag == 0 {
			break
		}
		if time.Since(endLoad) > 20*time.Second {
			b.Logf("the projection did not catch up within 20 s: %+v", st.Live)
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	b.ReportMetric(float64(time.Since(endLoad).Microseconds())/1000, "catchup-ms")
	if n := failed.Load(); n > 0 {
		b.Fatalf("%d commands failed", n)
	}
	all := slices.Concat(lat...)
	slices.Sort(all)
	if len(all) > 0 {
		b.ReportMetric(float64(all[len(all)/2].Microseconds())/1000, "p50-ms")
		b.ReportMetric(float64(all[len(all)*99/100].Microseconds())/1000, "p99-ms")
	}
	b.ReportMetric(float64(b.N)/loadTime.Seconds(), "appends/s")
	if len(lags) > 0 {
		var sum int64
		for _, l := range lags {
			sum += l
		}
		b.ReportMetric(float64(sum)/float64(len(lags)), "lag-mean")
		// The lag over time: the most in each tenth of the run.
		tenths := make([]int64, 0, 10)
		for k := range 10 {
			part := lags[k*len(lags)/10 : (k+1)*len(lags)/10]
			if len(part) > 0 {
				tenths = append(tenths, slices.Max(part))
			}
		}
		b.Logf("lag-max per tenth of the run: %v", tenths)
		sorted := slices.Sorted(slices.Values(lags))
		b.ReportMetric(float64(sorted[len(sorted)-1]), "lag-max")
		b.ReportMetric(float64(sorted[len(sorted)*99/100]), "lag-p99")
	}
}
