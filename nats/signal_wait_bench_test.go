package nats_test

import (
	"context"
	"fmt"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/command"
	"github.com/factum-go/factum/engine"
	"github.com/factum-go/factum/event"
	"github.com/factum-go/factum/examples/order"
	"github.com/factum-go/factum/nats"
	"github.com/factum-go/factum/saga"
	"github.com/factum-go/factum/sqlite"
	"github.com/nats-io/nats-server/v2/server"
	natsgo "github.com/nats-io/nats.go"
)

// BenchmarkWaitAcrossForProcessed sends the order example's PlaceOrder
// commands at instance b, 16 at a time, each waiting for PROCESSED
// (processed at b, its in-process bus), while instance a holds the
// consumers' leases: the snapshotter, the order summaries' projection
// and the saga handle every stream at a. It reports the wait signals a
// publishes to b per command (the branch signals no wait at b uses) and
// the process's CPU per command. SQLite in a file is the shared store.
func BenchmarkWaitAcrossForProcessed(b *testing.B) {
	ctx := context.Background()
	s, err := server.NewServer(&server.Options{Host: "127.0.0.1", Port: -1, NoLog: true, NoSigs: true})
	if err != nil {
		b.Fatal(err)
	}
	go s.Start()
	if !s.ReadyForConnections(10 * time.Second) {
		b.Fatal("nats server did not start")
	}
	b.Cleanup(s.Shutdown)
	db, err := sqlite.Open(ctx, filepath.Join(b.TempDir(), "factum.db"))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = db.Close() })
	prefix := "bench.signal"
	a, sigA := benchInstance(b, db, s.ClientURL(), prefix, "a")
	if _, err := a.Gateway().SendAndWait(ctx, factum.NewCommand(order.Inventory.ID("sku"), order.Restock{Qty: 1 << 30}), command.Wait(factum.StageSnapshot)); err != nil {
		b.Fatal(err)
	}
	if _, err := a.Gateway().SendAndWait(ctx, factum.NewCommand(order.Orders.ID("o-first"), order.PlaceOrder{SKU: "sku", Qty: 1}), command.Wait(factum.StageSagaHandled)); err != nil {
		b.Fatal(err)
	}
	bi, _ := benchInstance(b, db, s.ClientURL(), prefix, "b")
	sent0 := sigA.Stats().Sent
	var ru0 syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru0)
	b.ResetTimer()
	var wg sync.WaitGroup
	work := make(chan int)
	var failed error
	var mu sync.Mutex
	for range 16 {
		wg.Go(func() {
			for i := range work {
				cmd := factum.NewCommand(order.Orders.ID(fmt.Sprintf("o-%d", i)), order.PlaceOrder{SKU: "sku", Qty: 1})
				if _, err := bi.Gateway().SendAndWait(ctx, cmd, command.Wait(factum.StageProcessed)); err != nil {
					mu.Lock()
					failed = err
					mu.Unlock()
				}
			}
		})
	}
	for i := range b.N {
		work <- i
	}
	close(work)
	wg.Wait()
	// Let a's consumers catch up with the last streams before counting.
	if _, err := bi.Gateway().SendAndWait(ctx, factum.NewCommand(order.Orders.ID("o-last"), order.PlaceOrder{SKU: "sku", Qty: 1}), command.Wait(factum.StageSagaHandled).Within(time.Minute)); err != nil {
		b.Fatal(err)
	}
	b.StopTimer()
	if failed != nil {
		b.Fatal(failed)
	}
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	cpu := time.Duration(ru.Utime.Nano() + ru.Stime.Nano() - ru0.Utime.Nano() - ru0.Stime.Nano())
	b.ReportMetric(float64(sigA.Stats().Sent-sent0)/float64(b.N), "signals-a→b/cmd")
	b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N), "cpu-ns/cmd")
}

// benchInstance starts an engine of the order example on st, with its
// consumers under st's leases as holder name and its wait signals over
// NATS at url.
func benchInstance(b *testing.B, st engine.Storage, url, prefix, name string) (*engine.Engine, *nats.Signals) {
	b.Helper()
	ctx := context.Background()
	cps, err := st.CheckpointStore(ctx, order.Orders.Named().Context)
	if err != nil {
		b.Fatal(err)
	}
	leases := cps.(event.LeaseStore)
	proj, err := order.NewSummaries().Processor()
	if err != nil {
		b.Fatal(err)
	}
	nc, err := natsgo.Connect(url)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(nc.Close)
	sig, err := nats.NewSignals(nats.SignalsConfig{Conn: nc, Instance: name, Prefix: prefix})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = sig.Close() })
	rt, err := engine.New(engine.Config{
		Storage: st, Sagas: []*saga.Saga{order.Fulfilment}, Processors: []*event.Processor{proj},
		Events:         event.Config{Leases: leases, Holder: name, LeaseTTL: time.Minute, PollInterval: 50 * time.Millisecond},
		DefaultTimeout: time.Minute, Bus: sig.Bus(nil), Signals: sig.Sink,
	}, order.Orders, order.Inventory)
	if err != nil {
		b.Fatal(err)
	}
	if err := rt.Start(ctx); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		_ = rt.Shutdown(ctx)
	})
	return rt, sig
}
