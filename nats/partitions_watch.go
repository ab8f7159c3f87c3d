package nats

import "time"

// ownership is one subscriber's callbacks (see Partitions.Subscribe).
type ownership struct {
	acquire func(partition int, token uint64)
	release func(partition int)
}

// Subscribe adds callbacks that are called, beside PartitionsConfig's
// OnAcquire and OnRelease and after them, whenever this instance starts or
// stops owning a partition: a component made after StartPartitions (the
// command bus) learns of changes as they happen. The callbacks run on the
// goroutine that manages the leases, in order; release runs before the
// lease is deleted when a partition is given up, so a subscriber that
// finishes its work on the partition inside release is done before anyone
// else can take it. They must return within a small part of the lease. The
// partitions held before Subscribe are not replayed: read them with Owned
// and Owns. The returned function removes the callbacks.
func (p *Partitions) Subscribe(acquire func(partition int, token uint64), release func(partition int)) (unsubscribe func()) {
	o := &ownership{acquire: acquire, release: release}
	p.smu.Lock()
	p.subs = append(p.subs, o)
	p.smu.Unlock()
	return func() {
		p.smu.Lock()
		defer p.smu.Unlock()
		for i, s := range p.subs {
			if s == o {
				p.subs = append(p.subs[:i:i], p.subs[i+1:]...)
				return
			}
		}
	}
}

// Lease reports whether this instance owns the partition now, with the
// fencing token of its claim and the moment until which it may act on it
// (Owns turns false then): a holder that starts work on the partition can
// tell whether the work ends in time.
func (p *Partitions) Lease(partition int) (token uint64, validUntil time.Time, ok bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	l := p.held[partition]
	if !l.inForce(time.Now()) {
		return 0, time.Time{}, false
	}
	return l.token, l.validUntil, true
}

// LeaseDuration returns the lease length every instance of the context uses.
func (p *Partitions) LeaseDuration() time.Duration { return p.cfg.Lease }

func (p *Partitions) subscribers() []*ownership {
	p.smu.Lock()
	defer p.smu.Unlock()
	return append([]*ownership(nil), p.subs...)
}

// Owner returns the instance named in the partition's lease as the bucket
// shows it here ("" when the partition has no lease), and whether that
// instance is alive: this one, or one that announced itself within a lease.
func (p *Partitions) Owner(partition int) (owner string, alive bool) {
	key := p.partitionKey(partition)
	p.mu.Lock()
	defer p.mu.Unlock()
	o, ok := p.view[key]
	if !ok || !o.live {
		return "", false
	}
	if o.value == p.cfg.Instance {
		return o.value, true
	}
	in, ok := p.view[p.instanceKey(o.value)]
	return o.value, ok && in.live && time.Since(in.seen) < p.cfg.Lease
}
