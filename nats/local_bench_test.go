package nats

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/factum-go/factum/aggregate"
	"github.com/factum-go/factum/command"
	"github.com/factum-go/factum/engine"
	"github.com/factum-go/factum/eventstore"
)

// BenchmarkAllLocal compares, on one plain memory store each (the
// executor's trusted append in every case), today's path (one instance,
// the in-process dispatcher) with one instance on the NATS bus owning
// every partition (LocalFirst): "all-local" with Signals as the engine's
// sink, "all-local-serve" wired as factum serve wires it (Signals.Bus
// around the bus, which stamps the origin header first), timed once every
// claim caught up with the stream (before that, a command of a claim whose
// consumers are being made travels through JetStream). Both sides use the
// default lanes. Run the cases in one run, several runs interleaved,
// and compare the ratios of cmd/s and cpu-ns/op: the machine is shared.
func BenchmarkAllLocal(b *testing.B) {
	for _, clients := range []int{1, 16} {
		b.Run(fmt.Sprintf("clients=%d", clients), func(b *testing.B) {
			b.Run("in-process", func(b *testing.B) {
				benchSend(b, clients, todayEngine(b, eventstore.NewMemory()), nil)
			})
			for _, serve := range []bool{false, true} {
				name := "all-local"
				if serve {
					name += "-serve"
				}
				b.Run(name, func(b *testing.B) {
					benchSend(b, clients, allLocalEngine(b, serve), nil)
				})
			}
		})
	}
}

// allLocalEngine starts one instance on the NATS bus, LocalFirst, owning
// every partition, on a memory store of its own; serve wraps its bus in
// Signals.Bus, as factum serve does.
func allLocalEngine(b *testing.B, serve bool) *engine.Engine {
	b.Helper()
	w := benchWorld(b)
	n := w.node(b, "i0", BusConfig{Local: LocalFirst})
	sig, err := NewSignals(SignalsConfig{Conn: n.nc, Instance: n.name, Prefix: w.prefix + ".signal"})
	if err != nil {
		b.Fatal(err)
	}
	var bus *Bus
	var nb engine.NewBus = func(proc command.Executor, sink command.Sink) (engine.Bus, error) {
		eb, err := n.newBus(proc, sink)
		bus, _ = eb.(*Bus)
		return eb, err
	}
	if serve {
		nb = sig.Bus(nb)
	}
	b.Cleanup(func() { _ = sig.Close() }) // after the engine's shutdown
	e := startOwning(b, w, n, engine.Config{Store: eventstore.NewMemory(), Bus: nb, Signals: sig.Sink}, tallyType(w.context))
	// Timed from the steady state: until a claim's consumers are made,
	// its partition's commands travel through JetStream (catching up).
	waitFor(b, 30*time.Second, "the claims to catch up", func() bool { return settledBus(bus) })
	return e
}

// startOwning starts an engine of cfg on node n and waits until n owns
// every partition of w; cleanup gives the partitions up, then shuts the
// engine down.
func startOwning(tb testing.TB, w *world, n *node, cfg engine.Config, types ...aggregate.Type) *engine.Engine {
	tb.Helper()
	e, err := engine.New(cfg, types...)
	if err != nil {
		tb.Fatal(err)
	}
	if err := e.Start(context.Background()); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		_ = n.parts.Close(ctx)
		_ = e.Shutdown(ctx)
	})
	n.waitOwns(tb, w.partitions)
	return e
}
