package nats_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"time"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/aggregate"
	"github.com/factum-go/factum/command"
	"github.com/factum-go/factum/engine"
	"github.com/factum-go/factum/eventstore"
	"github.com/factum-go/factum/nats"
	"github.com/nats-io/nats-server/v2/server"
	natsgo "github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

func ExampleStartPartitions() {
	// A JetStream server in process; in production, the cluster's URL.
	dir, _ := os.MkdirTemp("", "factum-nats-example")
	defer os.RemoveAll(dir)
	s, err := server.NewServer(&server.Options{Host: "127.0.0.1", Port: -1, JetStream: true, StoreDir: dir, NoLog: true, NoSigs: true})
	if err != nil {
		log.Fatal(err)
	}
	go s.Start()
	defer s.Shutdown()
	s.ReadyForConnections(5 * time.Second)

	ctx := context.Background()
	nc, err := natsgo.Connect(s.ClientURL())
	if err != nil {
		log.Fatal(err)
	}
	defer nc.Close()
	js, _ := jetstream.New(nc)
	kv, err := nats.OpenLeaseBucket(ctx, js, "factum_leases", 1)
	if err != nil {
		log.Fatal(err)
	}
	parts, err := nats.StartPartitions(ctx, nats.PartitionsConfig{
		KeyValue: kv, Context: "shop", Partitions: 4, Instance: "instance-1", Lease: time.Second,
	})
	if err != nil {
		log.Fatal(err)
	}
	defer parts.Close(ctx)
	// Alone, the instance soon owns every partition.
	for len(parts.Owned()) < 4 {
		time.Sleep(10 * time.Millisecond)
	}
	_, owns := parts.OwnsAggregate("cart-42")
	fmt.Println(parts.Owned(), owns)
	// Output: [0 1 2 3] true
}

func ExampleNewBus() {
	dir, _ := os.MkdirTemp("", "factum-nats-bus-example")
	defer os.RemoveAll(dir)
	s, err := server.NewServer(&server.Options{Host: "127.0.0.1", Port: -1, JetStream: true, StoreDir: dir, NoLog: true, NoSigs: true})
	if err != nil {
		log.Fatal(err)
	}
	go s.Start()
	defer s.Shutdown()
	s.ReadyForConnections(5 * time.Second)

	ctx := context.Background()
	nc, err := natsgo.Connect(s.ClientURL())
	if err != nil {
		log.Fatal(err)
	}
	defer nc.Close()
	js, _ := jetstream.New(nc)
	kv, err := nats.OpenLeaseBucket(ctx, js, "factum_leases", 1)
	if err != nil {
		log.Fatal(err)
	}
	parts, err := nats.StartPartitions(ctx, nats.PartitionsConfig{KeyValue: kv, Context: "shop", Instance: "instance-1", Lease: time.Second})
	if err != nil {
		log.Fatal(err)
	}
	defer parts.Close(ctx) // after the engine's shutdown
	// Every command goes through JetStream here, to show the path a
	// command for another instance's partition takes.
	bus, err := nats.NewBus(ctx, nats.BusConfig{JetStream: js, Partitions: parts, Local: nats.LocalNever})
	if err != nil {
		log.Fatal(err)
	}
	type add struct{ N int }
	type added struct{ N int }
	type counter struct{ Total int }
	counters := aggregate.New[counter]("shop", "counter",
		aggregate.Source(func(c *counter, e added) { c.Total += e.N }),
		aggregate.Handle(func(_ context.Context, _ counter, a add) ([]any, error) { return []any{added(a)}, nil }, aggregate.AllowCreate()),
	)
	e, err := engine.New(engine.Config{Store: eventstore.NewMemory(), Bus: bus}, counters)
	if err != nil {
		log.Fatal(err)
	}
	_ = e.Start(ctx)
	defer e.Shutdown(ctx)
	for len(parts.Owned()) < parts.Count() { // alone, it soon owns every partition
		time.Sleep(10 * time.Millisecond)
	}
	cmd := factum.NewCommand(factum.AggregateID{NamedAggregate: factum.NamedAggregate{Context: "shop", Aggregate: "counter"}, ID: "c-1"}, add{N: 2})
	res, err := e.Gateway().SendAndWait(ctx, cmd, command.Wait(factum.StageProcessed))
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.Stage, res.AggregateVersion)
	// Output: PROCESSED 1
}
