package nats

import (
	"context"
	"testing"
	"time"

	"github.com/factum-go/factum/command"
	"github.com/factum-go/factum/command/bustest"
)

// kitBus returns the kit's bus maker: one instance owning every partition
// of a world made by newWorld, with the lanes and the stream bounded at
// capacity.
func kitBus(local LocalMode, newWorld func(t *testing.T) *world) bustest.NewBus {
	const capacity = 16
	return func(t *testing.T, proc command.Executor, sink command.Sink) bustest.Harness {
		w := newWorld(t)
		w.context = "bustest" // the kit's aggregates' context
		n := w.node(t, "kit", BusConfig{Local: local, Lanes: 8, QueueSize: capacity, MaxPending: capacity, PublishTimeout: 5 * time.Second})
		n.waitOwns(t, w.partitions)
		b, err := n.newBus(proc, sink)
		if err != nil {
			t.Fatal(err)
		}
		b.Start(context.Background())
		t.Cleanup(func() { _ = b.Shutdown(context.Background()) })
		return bustest.Harness{Bus: b, Shutdown: b.Shutdown, Capacity: capacity}
	}
}

// The bus contract holds on the JetStream bus, with commands processed
// locally (LocalFirst) and with every command through JetStream
// (LocalNever), and with stored commands processed locally (LocalDurable), on a server in process and on the machine's.
func TestBusContract(t *testing.T) {
	for _, mode := range []struct {
		name  string
		local LocalMode
	}{{"LocalFirst", LocalFirst}, {"LocalNever", LocalNever}, {"LocalDurable", LocalDurable}} {
		t.Run(mode.name, func(t *testing.T) {
			t.Run("in-process", func(t *testing.T) {
				bustest.Run(t, kitBus(mode.local, func(t *testing.T) *world { return inProcessWorld(t, 4, 3*time.Second) }))
			})
			t.Run("FACTUM_NATS_URL", func(t *testing.T) {
				bustest.Run(t, kitBus(mode.local, func(t *testing.T) *world { return sharedWorld(t, 4, 3*time.Second) }))
			})
		})
	}
}
