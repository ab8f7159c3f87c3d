package nats_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"time"

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
