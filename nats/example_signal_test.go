package nats_test

import (
	"fmt"
	"log"
	"time"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/command"
	"github.com/factum-go/factum/nats"
	"github.com/nats-io/nats-server/v2/server"
	natsgo "github.com/nats-io/nats.go"
)

func ExampleSignals() {
	// A NATS server in process; in production, the cluster's URL.
	s, err := server.NewServer(&server.Options{Host: "127.0.0.1", Port: -1, NoLog: true, NoSigs: true})
	if err != nil {
		log.Fatal(err)
	}
	go s.Start()
	defer s.Shutdown()
	s.ReadyForConnections(5 * time.Second)

	// Two instances, each with its own connection and signal transport;
	// the local sinks stand for their engines' waiters.
	connect := func(name string, local command.Sink) *nats.Signals {
		nc, err := natsgo.Connect(s.ClientURL())
		if err != nil {
			log.Fatal(err)
		}
		sig, err := nats.NewSignals(nats.SignalsConfig{Conn: nc, Instance: name})
		if err != nil {
			log.Fatal(err)
		}
		if _, err := sig.Sink(local); err != nil { // engine.Config.Signals
			log.Fatal(err)
		}
		return sig
	}
	got := make(chan factum.Signal, 1)
	web1 := connect("web-1", sinkFunc(func(s factum.Signal) { got <- s }))
	web2 := connect("web-2", sinkFunc(func(factum.Signal) {}))
	defer web1.Close()
	defer web2.Close()

	// web-2 holds the snapshotter's lease; web-1 sent the command.
	web2.Signal(factum.Signal{Stage: factum.StageSnapshot, CommandID: "cmd-1", Origin: "web-1", SignalTime: time.Now()})
	sig := <-got
	fmt.Println(sig.Stage, sig.CommandID, web2.Stats().Sent, web1.Stats().Received)
	// Output: SNAPSHOT cmd-1 1 1
}

// sinkFunc is a command.Sink of a function.
type sinkFunc func(factum.Signal)

func (f sinkFunc) Signal(s factum.Signal) { f(s) }
