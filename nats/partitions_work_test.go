package nats

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// Close cancels the context of the work running on a partition and keeps
// the lease, renewed, until that work ended; only then is it deleted.
// Work cannot begin under a claim given up.
func TestCloseDeletesALeaseOnlyAfterItsWorkEnded(t *testing.T) {
	_, kv := connect(t, startServer(t).ClientURL(), "factum_leases")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	const lease = 3 * time.Second
	p, err := StartPartitions(ctx, PartitionsConfig{KeyValue: kv, Context: "shop", Partitions: 1, Instance: "a", Lease: lease})
	if err != nil {
		t.Fatal(err)
	}
	var token uint64
	waitFor(t, 30*time.Second, "a to own partition 0", func() bool {
		var ok bool
		token, ok = p.Owns(0)
		return ok
	})
	wctx, work, ok := p.Begin(context.Background(), 0, token)
	if !ok {
		t.Fatal("no work begins under the claim in force")
	}
	if _, _, ok := p.Begin(context.Background(), 0, token+1); ok {
		t.Fatal("work began under a claim that is not this instance's")
	}
	closed := make(chan error, 1)
	go func() { closed <- p.Close(ctx) }()
	<-wctx.Done() // Close cancels the work first
	if _, _, ok := p.Begin(context.Background(), 0, token); ok {
		t.Fatal("work began under a claim being given up")
	}
	// Past a renewal, well within the lease the wait is bounded by: the
	// lease must stay, naming a.
	for range 2 {
		time.Sleep(lease / 6)
		e, err := kv.Get(ctx, "shop.partition.0")
		if err != nil || string(e.Value()) != "a" {
			t.Fatalf("partition 0 while its work runs: %v; want a's lease kept", err)
		}
	}
	select {
	case err := <-closed:
		t.Fatalf("Close returned (%v) while the work still ran", err)
	default:
	}
	work.End()
	if err := <-closed; err != nil {
		t.Fatal(err)
	}
	if _, err := kv.Get(ctx, "shop.partition.0"); !errors.Is(err, jetstream.ErrKeyNotFound) {
		t.Fatalf("partition 0 after its work ended and Close returned: %v, want deleted", err)
	}
}

// Work that outlasts a lease after its partition was given up is not
// waited for any longer: the lease is left to lapse, not deleted, and
// Close says so.
func TestCloseLeavesTheLeaseOfWorkThatOutlastsItToLapse(t *testing.T) {
	_, kv := connect(t, startServer(t).ClientURL(), "factum_leases")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	p, err := StartPartitions(ctx, PartitionsConfig{KeyValue: kv, Context: "shop", Partitions: 1, Instance: "a", Lease: testLease})
	if err != nil {
		t.Fatal(err)
	}
	var token uint64
	waitFor(t, 30*time.Second, "a to own partition 0", func() bool {
		var ok bool
		token, ok = p.Owns(0)
		return ok
	})
	_, work, ok := p.Begin(context.Background(), 0, token)
	if !ok {
		t.Fatal("no work begins under the claim in force")
	}
	defer work.End()
	if err := p.Close(ctx); err == nil {
		t.Fatal("Close returned no error while a partition's work still ran")
	}
	if e, err := kv.Get(ctx, "shop.partition.0"); err != nil || string(e.Value()) != "a" {
		t.Fatalf("partition 0 after Close: %v; want a's lease left to lapse", err)
	}
}
