package nats

import (
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/command"
	"github.com/factum-go/factum/engine"
	"github.com/factum-go/factum/internal/servicetest"
	natsgo "github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// world is one NATS server with a lease bucket, a command stream and a
// subject prefix of its own, for the instances of one test.
type world struct {
	t          testing.TB
	url        string
	bucket     string
	stream     string
	prefix     string
	context    string
	partitions int
	lease      time.Duration
}

// newWorld makes names unique to the test on the server at url; on a
// shared server it deletes the stream and the bucket at cleanup.
func newWorld(t testing.TB, url string, shared bool, partitions int, lease time.Duration) *world {
	t.Helper()
	id := strings.ReplaceAll(factum.NewID(), "-", "")
	w := &world{t: t, url: url, bucket: "factum_bus_" + id, stream: "FACTUM_CMD_" + id, prefix: "t" + id + ".cmd",
		context: "shop", partitions: partitions, lease: lease}
	if shared {
		t.Cleanup(func() {
			nc, err := natsgo.Connect(url)
			if err != nil {
				return
			}
			defer nc.Close()
			js, _ := jetstream.New(nc)
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			_ = js.DeleteStream(ctx, w.stream)
			_ = js.DeleteKeyValue(ctx, w.bucket)
		})
	}
	return w
}

// inProcessWorld is a world on a server of the test's own.
func inProcessWorld(t testing.TB, partitions int, lease time.Duration) *world {
	return newWorld(t, startServer(t).ClientURL(), false, partitions, lease)
}

// sharedWorld is a world on the machine's server (FACTUM_NATS_URL).
func sharedWorld(t testing.TB, partitions int, lease time.Duration) *world {
	return newWorld(t, servicetest.NATSURL(t), true, partitions, lease)
}

// node is one instance: its own connection, partitions and bus maker.
type node struct {
	name   string
	nc     *natsgo.Conn
	js     jetstream.JetStream
	parts  *Partitions
	newBus engine.NewBus
}

// node starts an instance named name on the world's server with the bus
// configured by cfg (the world's names filled in). Cleanup closes its
// partitions, then its connection; register the bus's shutdown after
// calling node.
func (w *world) node(t testing.TB, name string, cfg BusConfig) *node {
	t.Helper()
	return w.nodeAt(t, name, w.url, 1, cfg)
}

// nodeAt is world.node with the connection's URL, options and the
// replicas of what it makes chosen.
func (w *world) nodeAt(t testing.TB, name, url string, replicas int, cfg BusConfig, opts ...natsgo.Option) *node {
	t.Helper()
	nc, js := dial(t, url, opts...)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	kv, err := OpenLeaseBucket(ctx, js, w.bucket, replicas)
	if err != nil {
		t.Fatal(err)
	}
	parts, err := StartPartitions(ctx, PartitionsConfig{KeyValue: kv, Context: w.context, Partitions: w.partitions, Instance: name, Lease: w.lease})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = parts.Close(context.Background()) })
	cfg.JetStream, cfg.Partitions, cfg.Stream, cfg.SubjectPrefix = js, parts, w.stream, w.prefix
	if cfg.Logger == nil && !testing.Verbose() {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	nb, err := NewBus(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return &node{name: name, nc: nc, js: js, parts: parts, newBus: nb}
}

// dial opens a connection of its own to the server at url, reconnecting
// without end, with opts beside that; cleanup closes it.
func dial(t testing.TB, url string, opts ...natsgo.Option) (*natsgo.Conn, jetstream.JetStream) {
	t.Helper()
	opts = append([]natsgo.Option{natsgo.MaxReconnects(-1), natsgo.ReconnectWait(50 * time.Millisecond)}, opts...)
	return servicetest.JetStream(t, url, opts...)
}

// waitFor polls cond until it holds, failing the test after d.
func waitFor(t testing.TB, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s", d, what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// waitOwns waits until the node owns n partitions.
func (n *node) waitOwns(t testing.TB, count int) {
	t.Helper()
	waitFor(t, 30*time.Second, n.name+" to own its partitions", func() bool { return len(n.parts.Owned()) == count })
}

// startBus makes the node's bus over proc and sink and starts it until
// the test ends, once the node owns every partition and has caught up
// with each: its commands take the local path from then on.
func (n *node) startBus(t testing.TB, proc command.Executor, sink command.Sink) *Bus {
	t.Helper()
	eb, err := n.newBus(proc, sink)
	if err != nil {
		t.Fatal(err)
	}
	bus := eb.(*Bus)
	bus.Start(context.Background())
	t.Cleanup(func() { _ = bus.Shutdown(context.Background()) })
	n.waitOwns(t, n.parts.Count())
	waitFor(t, 30*time.Second, "the claims to catch up", func() bool { return settledBus(bus) })
	return bus
}
