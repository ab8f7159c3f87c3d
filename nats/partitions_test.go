package nats

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/internal/servicetest"
	"github.com/nats-io/nats.go/jetstream"
)

const testLease = 400 * time.Millisecond

func TestPartitionOfIsStable(t *testing.T) {
	// These values pin the hash: changing it moves aggregates between
	// partitions, so a rolling upgrade would have two owners for one.
	cases := []struct {
		id   string
		n    int
		want int
	}{
		{"", 16, 5},
		{"a", 16, 12},
		{"cart-42", 7, 6},
	}
	for _, c := range cases {
		if got := PartitionOf(c.id, c.n); got != c.want {
			t.Errorf("PartitionOf(%q, %d) = %d, want %d", c.id, c.n, got, c.want)
		}
	}
	seen := map[int]int{}
	for i := range 16_000 {
		seen[PartitionOf(fmt.Sprintf("agg-%d", i), 16)]++
	}
	for n := range 16 {
		if seen[n] < 800 || seen[n] > 1200 {
			t.Errorf("partition %d holds %d of 16,000 aggregates, want about 1,000", n, seen[n])
		}
	}
}

func TestStartRefusesBadConfig(t *testing.T) {
	_, kv := connect(t, startServer(t).ClientURL(), "factum_leases")
	ctx := context.Background()
	for name, cfg := range map[string]PartitionsConfig{
		"no bucket":   {Context: "shop"},
		"no context":  {KeyValue: kv},
		"bad context": {KeyValue: kv, Context: "a.b"},
		"short lease": {KeyValue: kv, Context: "shop", Lease: time.Millisecond},
		"negative":    {KeyValue: kv, Context: "shop", Partitions: -1},
		"bad name":    {KeyValue: kv, Context: "shop", Instance: "a b"},
	} {
		if p, err := StartPartitions(ctx, cfg); err == nil {
			_ = p.Close(ctx)
			t.Errorf("%s: started", name)
		}
	}
}

// claim is one acquisition of a partition.
type claim struct {
	owner string
	token uint64
}

// instance is one member of a test cluster with its own connection.
type instance struct {
	name string
	p    *Partitions
	stop func() // cuts its NATS connection
}

// cluster starts and probes instances; it records every acquisition and
// every moment two instances owned one partition at once.
type cluster struct {
	t           *testing.T
	url, bucket string
	partitions  int

	mu        sync.Mutex
	members   []*instance
	tokens    map[int][]claim // acquisitions per partition, in order
	overlaps  []string
	probeDone chan struct{}
	stopProbe atomic.Bool
}

// onEachServer runs test on an in-process server of the nats-server
// module's version and on the machine's (FACTUM_NATS_URL), whose version
// may be older, in a bucket of its own.
func onEachServer(t *testing.T, test func(t *testing.T, newCluster func(partitions int) *cluster)) {
	t.Run("in-process", func(t *testing.T) {
		url := startServer(t).ClientURL()
		test(t, func(n int) *cluster { return newCluster(t, url, "factum_leases", n) })
	})
	t.Run("FACTUM_NATS_URL", func(t *testing.T) {
		url := servicetest.NATSURL(t)
		bucket := "factum_leases_" + strings.ReplaceAll(factum.NewID(), "-", "")
		t.Cleanup(func() { deleteBucket(t, url, bucket) })
		test(t, func(n int) *cluster { return newCluster(t, url, bucket, n) })
	})
}

// newCluster starts a cluster of instances on the server at url, with the
// leases in bucket.
func newCluster(t *testing.T, url, bucket string, partitions int) *cluster {
	c := &cluster{t: t, url: url, bucket: bucket, partitions: partitions, tokens: map[int][]claim{}, probeDone: make(chan struct{})}
	go c.probe()
	t.Cleanup(func() {
		c.stopProbe.Store(true)
		<-c.probeDone
		c.mu.Lock()
		defer c.mu.Unlock()
		for _, o := range c.overlaps {
			t.Error(o)
		}
		// An instance whose lease lapsed and was renewed in time owns
		// the partition again under the same token; a new owner has a
		// higher one.
		for n, claims := range c.tokens {
			for i := 1; i < len(claims); i++ {
				prev, cur := claims[i-1], claims[i]
				if cur.token < prev.token || cur.owner != prev.owner && cur.token == prev.token {
					t.Errorf("partition %d: fencing tokens do not rise with each new owner: %v", n, claims)
				}
			}
		}
	})
	return c
}

func (c *cluster) start(name string) *instance {
	c.t.Helper()
	nc, kv := connect(c.t, c.url, c.bucket)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	p, err := StartPartitions(ctx, PartitionsConfig{
		KeyValue: kv, Context: "shop", Partitions: c.partitions, Instance: name, Lease: testLease,
		OnAcquire: func(n int, token uint64) {
			c.mu.Lock()
			defer c.mu.Unlock()
			c.tokens[n] = append(c.tokens[n], claim{name, token})
		},
	})
	if err != nil {
		c.t.Fatal(err)
	}
	in := &instance{name: name, p: p, stop: nc.Close}
	c.mu.Lock()
	c.members = append(c.members, in)
	c.mu.Unlock()
	return in
}

// remove takes the instance out of the probe (after it closed or died).
func (c *cluster) remove(in *instance) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.members = slices.DeleteFunc(c.members, func(m *instance) bool { return m == in })
}

// probe looks, again and again, for a partition two instances own at once:
// a owns it before and after b is seen owning it. A lease is one
// contiguous interval, so a then owned it at the moment b did.
func (c *cluster) probe() {
	defer close(c.probeDone)
	for !c.stopProbe.Load() {
		c.mu.Lock()
		members := slices.Clone(c.members)
		c.mu.Unlock()
		for n := range c.partitions {
			for _, a := range members {
				if _, ok := a.p.Owns(n); !ok {
					continue
				}
				for _, b := range members {
					if b == a {
						continue
					}
					if _, ok := b.p.Owns(n); ok {
						if _, still := a.p.Owns(n); still {
							c.mu.Lock()
							c.overlaps = append(c.overlaps, fmt.Sprintf("partition %d owned by %s and %s at once", n, a.name, b.name))
							c.mu.Unlock()
						}
					}
				}
			}
		}
		time.Sleep(200 * time.Microsecond)
	}
}

// await waits until the instances own the shares wanted (by name), every
// partition owned by one of them.
func (c *cluster) await(want map[string]int) {
	c.t.Helper()
	deadline := time.Now().Add(60 * testLease)
	for {
		got := map[string]int{}
		total := 0
		c.mu.Lock()
		for _, m := range c.members {
			got[m.name] = len(m.p.Owned())
			total += got[m.name]
		}
		c.mu.Unlock()
		if total == c.partitions && fmt.Sprint(got) == fmt.Sprint(want) {
			return
		}
		if time.Now().After(deadline) {
			c.t.Fatalf("shares %v, want %v", got, want)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestOneInstanceOwnsEveryPartition(t *testing.T) {
	onEachServer(t, func(t *testing.T, newCluster func(int) *cluster) {
		c := newCluster(16)
		a := c.start("a")
		c.await(map[string]int{"a": 16})
		if got := a.p.Owned(); len(got) != 16 || got[0] != 0 || got[15] != 15 {
			t.Errorf("Owned() = %v", got)
		}
		if _, ok := a.p.OwnsAggregate("cart-1"); !ok {
			t.Error("the owner of every partition does not own cart-1's")
		}
		// The bucket shows the claims once the watch delivered them.
		for deadline := time.Now().Add(60 * testLease); ; time.Sleep(10 * time.Millisecond) {
			owners := a.p.Owners()
			if len(owners) == 16 && !slices.ContainsFunc(slices.Collect(maps.Values(owners)), func(o string) bool { return o != "a" }) {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("Owners() = %v", owners)
			}
		}
		if err := a.p.Close(context.Background()); err != nil {
			t.Fatal(err)
		}
		c.remove(a)
		if got := a.p.Owned(); len(got) != 0 {
			t.Errorf("after Close, Owned() = %v", got)
		}
	})
}

// Instances that join and leave rebalance to fair shares (±1), and no
// partition is ever owned by two of them at once.
func TestInstancesRebalanceAsTheyJoinAndLeave(t *testing.T) {
	onEachServer(t, func(t *testing.T, newCluster func(int) *cluster) {
		c := newCluster(16)
		a := c.start("a")
		c.await(map[string]int{"a": 16})
		b := c.start("b")
		cc := c.start("c")
		c.await(map[string]int{"a": 6, "b": 5, "c": 5})
		if got := a.p.Instances(); fmt.Sprint(got) != "[a b c]" {
			t.Errorf("Instances() = %v", got)
		}
		if err := b.p.Close(context.Background()); err != nil {
			t.Fatal(err)
		}
		c.remove(b)
		c.await(map[string]int{"a": 8, "c": 8})
		if err := cc.p.Close(context.Background()); err != nil {
			t.Fatal(err)
		}
		c.remove(cc)
		c.await(map[string]int{"a": 16})
	})
}

// An instance cut off from NATS stops acting on its partitions before any
// other instance takes them (the probe checks it), and they are all taken
// over.
func TestACutOffInstanceIsFencedThenTakenOver(t *testing.T) {
	onEachServer(t, func(t *testing.T, newCluster func(int) *cluster) {
		c := newCluster(8)
		a := c.start("a")
		c.await(map[string]int{"a": 8})
		b := c.start("b")
		c.await(map[string]int{"a": 4, "b": 4})
		a.stop() // no renewal, no release: as a crash or a partitioned network
		c.await(map[string]int{"a": 0, "b": 8})
		c.remove(a)
		if err := b.p.Close(context.Background()); err != nil {
			t.Fatal(err)
		}
		c.remove(b)
		c.mu.Lock()
		defer c.mu.Unlock()
		for n := range 8 {
			if owners := distinctOwners(c.tokens[n]); n < 4 && owners != 2 {
				// Partitions 0-3 stayed with a when b joined (a gave up the
				// highest four), so b's takeover is their second claim.
				t.Errorf("partition %d was claimed by %d instances, want a then b: %v", n, owners, c.tokens[n])
			}
		}
	})
}

// A restarted instance waits a full lease before it takes partitions
// another instance held, so a lease still in use is never taken.
func TestANewInstanceWaitsOutLeasesItDidNotSeeLapse(t *testing.T) {
	onEachServer(t, func(t *testing.T, newCluster func(int) *cluster) {
		c := newCluster(4)
		a := c.start("a")
		c.await(map[string]int{"a": 4})
		a.stop()
		// b starts while a's leases are still valid: the probe would see
		// them owned twice if b took them at once; b takes them in the end.
		c.start("b")
		c.await(map[string]int{"a": 0, "b": 4})
	})
}

func distinctOwners(claims []claim) int {
	n := 0
	for i, c := range claims {
		if i == 0 || c.owner != claims[i-1].owner {
			n++
		}
	}
	return n
}

// A watch that closes is made again: the instance still sees others join
// and gives them their share.
func TestAClosedWatchIsMadeAgain(t *testing.T) {
	c := newCluster(t, startServer(t).ClientURL(), "factum_leases", 8)
	a := c.start("a")
	c.await(map[string]int{"a": 8})
	a.p.wmu.Lock()
	_ = a.p.watcher.Stop()
	a.p.wmu.Unlock()
	c.start("b")
	c.await(map[string]int{"a": 4, "b": 4})
}

// A renewal that lands without its answer (cut short by Close, say)
// leaves the lease ours at a later revision: Close still releases it, and
// a lease that another instance holds now is not an error.
func TestCloseReleasesALeaseAtALaterRevision(t *testing.T) {
	onEachServer(t, func(t *testing.T, newCluster func(int) *cluster) {
		c := newCluster(2)
		a := c.start("a")
		c.await(map[string]int{"a": 2})
		_, kv := connect(t, c.url, c.bucket)
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		// Partition 0: the renewal landed unseen. Partition 1: another
		// instance holds it now.
		if _, err := kv.Put(ctx, "shop.partition.0", []byte("a")); err != nil {
			t.Fatal(err)
		}
		if _, err := kv.Put(ctx, "shop.partition.1", []byte("z")); err != nil {
			t.Fatal(err)
		}
		c.remove(a)
		if err := a.p.Close(ctx); err != nil {
			t.Fatalf("Close: %v", err)
		}
		if _, err := kv.Get(ctx, "shop.partition.0"); !errors.Is(err, jetstream.ErrKeyNotFound) {
			t.Fatalf("partition 0 after Close: %v, want deleted", err)
		}
		if e, err := kv.Get(ctx, "shop.partition.1"); err != nil || string(e.Value()) != "z" {
			t.Fatalf("partition 1 after Close: %v; want z's lease left alone", err)
		}
	})
}
