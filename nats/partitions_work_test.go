package nats

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// Close cancels the context of the work running on a partition and keeps
// the lease, renewed, until that work ended, a lease at the most: work
// that ends in time has the lease deleted after it; work that outlasts it
// is not waited for any longer, its lease left to lapse, not deleted, and
// Close says so. Work cannot begin under a claim given up.
func TestCloseAndTheLeaseOfRunningWork(t *testing.T) {
	for _, tc := range []struct {
		name  string
		lease time.Duration
		then  func(t *testing.T, s workScene) // the rest of the test
	}{
		{name: "the lease is deleted only after its work ended", lease: 3 * time.Second, then: closeAfterTheWorkEnded},
		{name: "the lease of work that outlasts it is left to lapse", lease: testLease, then: closeWhileTheWorkOutlastsTheLease},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, kv := connect(t, startServer(t).ClientURL(), "factum_leases")
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			p, err := StartPartitions(ctx, PartitionsConfig{KeyValue: kv, Context: "shop", Partitions: 1, Instance: "a", Lease: tc.lease})
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
			tc.then(t, workScene{ctx: ctx, p: p, kv: kv, lease: tc.lease, token: token, wctx: wctx, work: work})
		})
	}
}

// workScene is one instance owning partition 0 of its lease bucket, with
// work begun on it under token.
type workScene struct {
	ctx   context.Context
	p     *Partitions
	kv    jetstream.KeyValue
	lease time.Duration
	token uint64
	wctx  context.Context // the work's
	work  Work
}

// closeAfterTheWorkEnded: Close keeps the lease while the work runs and
// deletes it once the work ended.
func closeAfterTheWorkEnded(t *testing.T, s workScene) {
	ctx, p, kv, token := s.ctx, s.p, s.kv, s.token
	if _, _, ok := p.Begin(context.Background(), 0, token+1); ok {
		t.Fatal("work began under a claim that is not this instance's")
	}
	closed := make(chan error, 1)
	go func() { closed <- p.Close(ctx) }()
	<-s.wctx.Done() // Close cancels the work first
	if _, _, ok := p.Begin(context.Background(), 0, token); ok {
		t.Fatal("work began under a claim being given up")
	}
	// Past a renewal, well within the lease the wait is bounded by: the
	// lease must stay, naming a.
	for range 2 {
		time.Sleep(s.lease / 6)
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
	s.work.End()
	if err := <-closed; err != nil {
		t.Fatal(err)
	}
	if _, err := kv.Get(ctx, "shop.partition.0"); !errors.Is(err, jetstream.ErrKeyNotFound) {
		t.Fatalf("partition 0 after its work ended and Close returned: %v, want deleted", err)
	}
}

// closeWhileTheWorkOutlastsTheLease: Close gives up on work that outlasts
// the lease, leaves the lease and says so.
func closeWhileTheWorkOutlastsTheLease(t *testing.T, s workScene) {
	defer s.work.End()
	if err := s.p.Close(s.ctx); err == nil {
		t.Fatal("Close returned no error while a partition's work still ran")
	}
	if e, err := s.kv.Get(s.ctx, "shop.partition.0"); err != nil || string(e.Value()) != "a" {
		t.Fatalf("partition 0 after Close: %v; want a's lease left to lapse", err)
	}
}
