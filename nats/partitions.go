package nats

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/factum-go/factum"
	"github.com/nats-io/nats.go/jetstream"
)

// Defaults of PartitionsConfig.
const (
	// DefaultPartitions is the number of partitions of a context.
	DefaultPartitions = 16
	// DefaultLease is how long a partition lease lasts without renewal.
	DefaultLease = 5 * time.Second
	// MinLease is the shortest lease accepted: renewals run four times
	// per lease, and each is a round trip to NATS.
	MinLease = 100 * time.Millisecond
)

// PartitionsConfig configures Partitions. KeyValue and Context are
// required; zero fields take the defaults.
type PartitionsConfig struct {
	// KeyValue is the bucket holding the leases (see OpenLeaseBucket).
	// Every instance of a context must use the same bucket.
	KeyValue jetstream.KeyValue
	// Context is the bounded context whose aggregates are partitioned.
	Context string
	// Partitions is the number of partitions; DefaultPartitions if 0.
	// Every instance of a context must use the same number.
	Partitions int
	// Instance names this instance; a new ID if empty. Two live
	// instances must not share a name.
	Instance string
	// Lease is how long a lease lasts without renewal; DefaultLease if 0,
	// at least MinLease. An instance that cannot renew stops acting on its
	// partitions within Lease, and a dead instance's partitions are taken
	// over about Lease after its last renewal.
	Lease time.Duration
	// OnAcquire, if set, is called when this instance starts owning a
	// partition, with the claim's fencing token. OnRelease, if set, is
	// called when it stops: given up, lost or lapsed. Both are called from
	// the one goroutine that manages the leases, in order, and must not
	// block for long.
	OnAcquire func(partition int, token uint64)
	OnRelease func(partition int)
}

// Partitions holds this instance's share of a context's partitions. It is
// safe for concurrent use. Start it with StartPartitions and stop it with
// Close, which gives its partitions up at once.
type Partitions struct {
	cfg    PartitionsConfig
	margin time.Duration

	mu      sync.Mutex
	held    map[int]*lease      // the partitions this instance holds
	leaving map[int]*lease      // given up, renewed until their work ended
	view    map[string]observed // the bucket's keys of this context, as watched
	closing bool                // Close began: everything held is given up
	errs    []error             // releases that failed while closing

	kicks   chan struct{} // wakes the lease goroutine to settle (see settle)
	drained chan struct{} // closed once closing left nothing held or leaving
	// drainedClosed says drained is closed; guarded by mu.
	drainedClosed bool

	smu  sync.Mutex // guards subs
	subs []*ownership

	wmu     sync.Mutex // guards watcher, which watch replaces when it closes
	watcher jetstream.KeyWatcher
	stop    context.CancelFunc
	done    chan struct{}
}

// lease is a partition this instance holds.
type lease struct {
	n          int
	token      uint64    // the revision of the claim: the fencing token
	rev        uint64    // the revision of the last renewal
	validUntil time.Time // when the holder stops acting on it
	lapsed     bool      // OnRelease was called for a lapse
	expired    bool      // its validity ran out (see expire); not yet lapsed
	timer      *time.Timer
	work       tenure    // the context work on the partition runs under
	running    int       // work begun under the claim and not ended
	leaving    bool      // given up, in leaving
	leftAt     time.Time // when it was given up
	dropped    bool      // deleted, lost or left to lapse: forgotten
}

// observed is a key of the bucket as the watch last delivered it.
type observed struct {
	value string
	rev   uint64
	live  bool      // a value, not a delete or purge marker
	seen  time.Time // when this revision was delivered here
}

// OpenLeaseBucket returns the key-value bucket named bucket, creating it
// (file storage, history 1, replicas as given, 1 if 0) if it does not
// exist. A request that gets no answer (a clustered JetStream electing a
// leader drops it) is made again, each attempt bounded, until ctx ends.
func OpenLeaseBucket(ctx context.Context, js jetstream.JetStream, bucket string, replicas int) (jetstream.KeyValue, error) {
	kv, err := retryLost(ctx, func(ctx context.Context) (jetstream.KeyValue, error) {
		return openLeaseBucket(ctx, js, bucket, replicas)
	})
	if err != nil {
		return nil, fmt.Errorf("nats: lease bucket %s: %w", bucket, err)
	}
	return kv, nil
}

// openLeaseBucket is one attempt of OpenLeaseBucket.
func openLeaseBucket(ctx context.Context, js jetstream.JetStream, bucket string, replicas int) (jetstream.KeyValue, error) {
	kv, err := js.KeyValue(ctx, bucket)
	if err == nil || !errors.Is(err, jetstream.ErrBucketNotFound) {
		return kv, err
	}
	kv, err = js.CreateKeyValue(ctx, jetstream.KeyValueConfig{
		Bucket: bucket, History: 1, Storage: jetstream.FileStorage, Replicas: max(replicas, 1),
		Description: "factum partition leases",
	})
	if errors.Is(err, jetstream.ErrBucketExists) {
		kv, err = js.KeyValue(ctx, bucket)
	}
	return kv, err
}

// StartPartitions starts managing this instance's share of the context's
// partitions: it watches the bucket, announces the instance, and claims
// and renews leases in the background until Close. It returns once the
// watch has delivered the bucket's current state, before any claim: an
// instance waits a full lease before taking a partition someone else
// held, so a restart cannot take over a lease still in use.
func StartPartitions(ctx context.Context, cfg PartitionsConfig) (*Partitions, error) {
	if cfg.KeyValue == nil {
		return nil, factum.IllegalArgument("nats: partitions need a key-value bucket")
	}
	if err := factum.ValidateName("context", cfg.Context); err != nil {
		return nil, err
	}
	if strings.ContainsAny(cfg.Context, ".*>") {
		return nil, factum.IllegalArgument(fmt.Sprintf("nats: context %q: a NATS key cannot hold '.', '*' or '>' in a name", cfg.Context))
	}
	if cfg.Partitions < 0 {
		return nil, factum.IllegalArgument(fmt.Sprintf("nats: %d partitions", cfg.Partitions))
	}
	if cfg.Partitions == 0 {
		cfg.Partitions = DefaultPartitions
	}
	if cfg.Instance == "" {
		cfg.Instance = factum.NewID()
	}
	if err := factum.ValidateID("instance", cfg.Instance); err != nil {
		return nil, err
	}
	if strings.ContainsAny(cfg.Instance, ".*>") {
		return nil, factum.IllegalArgument(fmt.Sprintf("nats: instance %q: a NATS key cannot hold '.', '*' or '>' in a name", cfg.Instance))
	}
	if cfg.Lease == 0 {
		cfg.Lease = DefaultLease
	}
	if cfg.Lease < MinLease {
		return nil, factum.IllegalArgument(fmt.Sprintf("nats: lease %v is shorter than %v", cfg.Lease, MinLease))
	}
	p := &Partitions{
		cfg:     cfg,
		margin:  cfg.Lease / 10,
		held:    map[int]*lease{},
		leaving: map[int]*lease{},
		view:    map[string]observed{},
		kicks:   make(chan struct{}, 1),
		drained: make(chan struct{}),
		done:    make(chan struct{}),
	}
	// The watch lives until Close, not as long as ctx: ctx bounds the start.
	runCtx, stop := context.WithCancel(context.Background())
	w, err := cfg.KeyValue.Watch(runCtx, cfg.Context+".>")
	if err != nil {
		stop()
		return nil, fmt.Errorf("nats: watch leases of %s: %w", cfg.Context, err)
	}
	p.watcher = w
	// The initial values end with a nil entry.
	for initial := true; initial; {
		select {
		case e, ok := <-w.Updates():
			if !ok {
				stop()
				return nil, fmt.Errorf("nats: watch leases of %s: closed", cfg.Context)
			}
			if e == nil {
				initial = false
				break
			}
			p.observe(e)
		case <-ctx.Done():
			stop()
			_ = w.Stop()
			return nil, ctx.Err()
		}
	}
	p.stop = stop
	go p.watch(runCtx)
	go p.run(runCtx)
	return p, nil
}

// Instance returns this instance's name.
func (p *Partitions) Instance() string { return p.cfg.Instance }

// Count returns the number of partitions.
func (p *Partitions) Count() int { return p.cfg.Partitions }

// Owns reports whether this instance owns the partition now, and the
// fencing token of its claim. It is false from the moment the lease could
// lapse (a safety margin before anyone else could take it), even if no
// renewal has failed yet.
func (p *Partitions) Owns(partition int) (token uint64, ok bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	l := p.held[partition]
	if !l.inForce(time.Now()) {
		return 0, false
	}
	return l.token, true
}

// OwnsAggregate reports whether this instance owns the partition of the
// aggregate ID, as Owns does.
func (p *Partitions) OwnsAggregate(id string) (token uint64, ok bool) {
	return p.Owns(PartitionOf(id, p.cfg.Partitions))
}

// Owned returns the partitions this instance owns now, in order.
func (p *Partitions) Owned() []int {
	p.mu.Lock()
	defer p.mu.Unlock()
	now := time.Now()
	var out []int
	for n, l := range p.held {
		if l.inForce(now) {
			out = append(out, n)
		}
	}
	slices.Sort(out)
	return out
}

// Owners returns the owner of each partition as the bucket shows it here:
// the instance named in its lease, even one that lapsed and was not taken
// over yet. A partition without a lease is absent.
func (p *Partitions) Owners() map[int]string {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := map[int]string{}
	for n := range p.cfg.Partitions {
		if o, ok := p.view[p.partitionKey(n)]; ok && o.live {
			out[n] = o.value
		}
	}
	return out
}

// Instances returns the instances seen alive (announced within a lease),
// this one included, sorted.
func (p *Partitions) Instances() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.liveInstances(time.Now())
}

// Close gives every held partition up and withdraws the instance. Each
// partition is given up as in rebalancing: the context of its work is
// cancelled, OnRelease is called, and its lease is deleted (so others can
// take it at once) once the work begun under it has ended, the lease
// being renewed meanwhile. A partition whose work outlasts a lease, or ctx,
// is left to lapse, and Close says so; one whose deletion fails lapses
// after its lease. A second Close returns nil once the first stopped the
// lease goroutine.
func (p *Partitions) Close(ctx context.Context) error {
	p.mu.Lock()
	if p.closing {
		p.mu.Unlock()
		<-p.done
		return nil // closed already, or closing
	}
	p.closing = true
	p.mu.Unlock()
	p.kick()
	select {
	case <-p.drained:
	case <-ctx.Done():
	}
	p.stop()
	<-p.done
	p.wmu.Lock()
	_ = p.watcher.Stop()
	p.wmu.Unlock()
	p.mu.Lock()
	errs := p.errs
	held, leaving := p.held, p.leaving
	p.held, p.leaving = map[int]*lease{}, map[int]*lease{}
	p.mu.Unlock()
	// What is left: ctx ended first. The lease goroutine has stopped, so
	// the callbacks are still called in order.
	for _, n := range sortedKeys(held) {
		l := held[n]
		p.mu.Lock()
		l.end()
		p.mu.Unlock()
		if !l.lapsed {
			p.released(n)
		}
		leaving[n] = l
	}
	for _, n := range sortedKeys(leaving) {
		p.mu.Lock()
		l := leaving[n]
		l.end()
		running := l.running
		p.mu.Unlock()
		if running > 0 {
			errs = append(errs, fmt.Errorf("nats: partition %d of %s left to lapse: %d of its commands still run", n, p.cfg.Context, running))
			continue
		}
		if err := p.release(ctx, n, l.rev); err != nil {
			errs = append(errs, fmt.Errorf("nats: release partition %d of %s: %w", n, p.cfg.Context, err))
		}
	}
	if err := p.cfg.KeyValue.Delete(ctx, p.instanceKey(p.cfg.Instance)); err != nil {
		errs = append(errs, fmt.Errorf("nats: withdraw instance %s: %w", p.cfg.Instance, err))
	}
	return errors.Join(errs...)
}

// release deletes the lease of partition n, held at revision rev. A
// renewal cut short by Close may have landed without its answer, leaving
// the lease ours at a later revision: then it is deleted at that one. A
// lease that names another instance is not ours to delete, and not an
// error.
func (p *Partitions) release(ctx context.Context, n int, rev uint64) error {
	key := p.partitionKey(n)
	for range 3 {
		err := p.cfg.KeyValue.Delete(ctx, key, jetstream.LastRevision(rev))
		if err == nil || !(errors.Is(err, jetstream.ErrKeyRevisionMismatch) || errors.Is(err, jetstream.ErrKeyExists)) {
			return err
		}
		e, gerr := p.cfg.KeyValue.Get(ctx, key)
		if errors.Is(gerr, jetstream.ErrKeyNotFound) {
			return nil
		}
		if gerr != nil {
			return errors.Join(err, gerr)
		}
		if e.Operation() != jetstream.KeyValuePut || string(e.Value()) != p.cfg.Instance {
			return nil
		}
		rev = e.Revision()
	}
	return fmt.Errorf("nats: the lease of partition %d keeps changing under its release", n)
}

func (p *Partitions) partitionKey(n int) string {
	return p.cfg.Context + ".partition." + strconv.Itoa(n)
}

func (p *Partitions) instanceKey(id string) string {
	return p.cfg.Context + ".instance." + id
}

// watch keeps the view up to date with the bucket. A watch that closes
// (its connection lost for good) is made again: it delivers every key once
// more, each seen anew, so claims wait a whole lease as after a start.
func (p *Partitions) watch(ctx context.Context) {
	p.wmu.Lock()
	w := p.watcher
	p.wmu.Unlock()
	for {
		select {
		case e, ok := <-w.Updates():
			if !ok {
				if w = p.rewatch(ctx); w == nil {
					return
				}
				continue
			}
			if e != nil {
				p.observe(e)
			}
		case <-ctx.Done():
			return
		}
	}
}

func (p *Partitions) observe(e jetstream.KeyValueEntry) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if o, ok := p.view[e.Key()]; ok && o.rev >= e.Revision() {
		return
	}
	p.view[e.Key()] = observed{
		value: string(e.Value()), rev: e.Revision(),
		live: e.Operation() == jetstream.KeyValuePut, seen: time.Now(),
	}
}

func sortedKeys(m map[int]*lease) []int {
	out := make([]int, 0, len(m))
	for n := range m {
		out = append(out, n)
	}
	slices.Sort(out)
	return out
}

// rewatch makes the bucket's watch again, retrying every quarter lease,
// until it succeeds (it returns the new watch) or ctx ends (nil).
func (p *Partitions) rewatch(ctx context.Context) jetstream.KeyWatcher {
	for {
		w, err := p.cfg.KeyValue.Watch(ctx, p.cfg.Context+".>")
		if err == nil {
			p.wmu.Lock()
			p.watcher = w
			p.wmu.Unlock()
			return w
		}
		t := time.NewTimer(p.cfg.Lease / 4)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return nil
		}
	}
}
