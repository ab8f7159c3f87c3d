package nats

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// unreadable is a bucket whose reads fail while fail is set.
type unreadable struct {
	jetstream.KeyValue
	fail   atomic.Bool
	failed atomic.Int64
}

var errUnreadable = errors.New("the bucket cannot be read")

func (u *unreadable) Get(ctx context.Context, key string) (jetstream.KeyValueEntry, error) {
	if u.fail.Load() {
		u.failed.Add(1)
		return nil, errUnreadable
	}
	return u.KeyValue.Get(ctx, key)
}

// A refused renewal whose follow-up read fails (Close cancelling it, a slow
// server) does not drop the lease: it may still be ours, so Close releases
// it. Dropping it left the key behind for a whole lease.
func TestALeaseWhoseReadFailsIsStillReleased(t *testing.T) {
	_, kv := connect(t, startServer(t).ClientURL(), "factum_leases")
	bucket := &unreadable{KeyValue: kv}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	p, err := StartPartitions(ctx, PartitionsConfig{KeyValue: bucket, Context: "shop", Partitions: 1, Instance: "a", Lease: testLease})
	if err != nil {
		t.Fatal(err)
	}
	for _, ok := p.Owns(0); !ok; _, ok = p.Owns(0) {
		if ctx.Err() != nil {
			t.Fatal("partition 0 never owned")
		}
		time.Sleep(5 * time.Millisecond)
	}
	bucket.fail.Store(true)
	// The renewal landed without its answer: the key names a at a later
	// revision than the one a holds.
	if _, err := kv.Put(ctx, "shop.partition.0", []byte("a")); err != nil {
		t.Fatal(err)
	}
	for bucket.failed.Load() == 0 {
		if ctx.Err() != nil {
			t.Fatal("no renewal read the lease")
		}
		time.Sleep(5 * time.Millisecond)
	}
	bucket.fail.Store(false)
	if err := p.Close(ctx); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if _, err := kv.Get(ctx, "shop.partition.0"); !errors.Is(err, jetstream.ErrKeyNotFound) {
		t.Fatalf("partition 0 after Close: %v, want deleted", err)
	}
}
