package nats

import (
	"context"
	"errors"
	"slices"
	"strings"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// run renews, rebalances and claims four times per lease until ctx ends,
// and settles whenever it is woken (a lease's validity ended, the last
// work of a partition given up ended, Close began).
func (p *Partitions) run(ctx context.Context) {
	defer close(p.done)
	t := time.NewTicker(p.cfg.Lease / 4)
	defer t.Stop()
	p.step(ctx)
	for {
		select {
		case <-t.C:
			p.step(ctx)
		case <-p.kicks:
			p.settle(ctx)
		case <-ctx.Done():
			return
		}
	}
}

// step is one round: announce the instance, renew held leases and those
// given up whose work still runs, give up partitions above the fair
// share, claim free ones up to it. Once Close began it only renews and
// settles.
func (p *Partitions) step(ctx context.Context) {
	p.mu.Lock()
	closing := p.closing
	p.mu.Unlock()
	if !closing {
		// Membership only steers the balance; safety rests on the
		// partition keys' revisions.
		op, cancel := p.op(ctx)
		_, _ = p.cfg.KeyValue.Put(op, p.instanceKey(p.cfg.Instance), []byte(p.cfg.Instance))
		cancel()
	}
	p.renew(ctx)
	p.renewLeaving(ctx)
	p.settle(ctx)
	if closing || ctx.Err() != nil {
		return
	}
	target := p.target()
	p.shed(ctx, target)
	p.claim(ctx, target)
}

func isRevisionMismatch(err error) bool {
	return errors.Is(err, jetstream.ErrKeyRevisionMismatch) || errors.Is(err, jetstream.ErrKeyExists)
}

// op bounds one call to NATS by a quarter of the lease: a call that takes
// longer could not keep a lease anyway.
func (p *Partitions) op(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, p.cfg.Lease/4)
}

// renew extends every held lease by a compare-and-set on its revision. A
// lease someone else changed is lost; one that cannot be renewed stays
// held but lapses (Owns turns false, the work's context is cancelled)
// when its validity ends, and comes back if a later renewal still finds
// its revision: as the same claim when nothing was cut off, else as a new
// claim whose token is that renewal's revision.
func (p *Partitions) renew(ctx context.Context) {
	p.mu.Lock()
	held := sortedKeys(p.held)
	p.mu.Unlock()
	for _, n := range held {
		p.mu.Lock()
		l := p.held[n]
		p.mu.Unlock()
		if l == nil {
			continue
		}
		sent := time.Now()
		op, cancel := p.op(ctx)
		rev, err := p.cfg.KeyValue.Update(op, p.partitionKey(n), []byte(p.cfg.Instance), l.rev)
		cancel()
		p.mu.Lock()
		if l.dropped || p.held[n] != l {
			p.mu.Unlock()
			continue // given up or lost meanwhile
		}
		switch {
		case err == nil:
			l.rev = rev
			l.validUntil = sent.Add(p.cfg.Lease - p.margin)
			if d := time.Until(l.validUntil); d > 0 && !l.lapsed && !l.expired {
				l.timer.Reset(d) // a timer that fired with nothing to cut off
			}
			if l.lapsed || l.expired {
				p.resume(n, l, rev)
				continue
			}
		case isRevisionMismatch(err):
			switch p.adopt(ctx, n, l) {
			case leaseAdopted:
				// An earlier renewal whose answer was lost did land: the
				// lease is still ours, at the revision the bucket shows.
				// Its validity stays as it was; the next renewal extends it.
			case leaseLost:
				delete(p.held, n)
				l.drop()
				wasLapsed := l.lapsed
				p.mu.Unlock()
				if !wasLapsed {
					p.released(n)
				}
				continue
			default:
				// The bucket could not be read (Close cancelled the read,
				// or the server is slow): the lease may still be ours, so
				// it stays held for the next renewal or Close's release,
				// and lapses at the end of its validity as any lease that
				// cannot be renewed.
				if !time.Now().Before(l.validUntil) && !l.lapsed {
					l.lapsed, l.expired = true, false
					l.end()
					p.mu.Unlock()
					p.released(n)
					continue
				}
			}
		case !time.Now().Before(l.validUntil) && !l.lapsed:
			l.lapsed, l.expired = true, false
			l.end()
			p.mu.Unlock()
			p.released(n)
			continue
		}
		p.mu.Unlock()
	}
}

// resume takes a lease back after its validity ran out and a renewal
// still found its revision: the lapse is reported first if it was not
// (OnRelease), then the claim starts anew under the renewal's revision
// (OnAcquire). p.mu is held; resume releases it.
func (p *Partitions) resume(n int, l *lease, rev uint64) {
	notify := !l.lapsed
	l.lapsed, l.expired = true, false
	p.mu.Unlock()
	if notify {
		p.released(n)
	}
	p.mu.Lock()
	if l.dropped || p.held[n] != l {
		p.mu.Unlock()
		return
	}
	l.token, l.lapsed = rev, false
	p.arm(l)
	p.mu.Unlock()
	p.acquired(n, rev)
}

// target is this instance's fair share: the partitions divided by the live
// instances, the first (partitions mod instances) of them in name order
// taking one more, so the shares add up to the partition count.
func (p *Partitions) target() int {
	p.mu.Lock()
	live := p.liveInstances(time.Now())
	p.mu.Unlock()
	idx, _ := slices.BinarySearch(live, p.cfg.Instance)
	share := p.cfg.Partitions / len(live)
	if idx < p.cfg.Partitions%len(live) {
		share++
	}
	return share
}

// liveInstances returns the instances announced within a lease, this one
// included, sorted. p.mu must be held.
func (p *Partitions) liveInstances(now time.Time) []string {
	prefix := p.cfg.Context + ".instance."
	live := []string{p.cfg.Instance}
	for k, o := range p.view {
		if id, ok := strings.CutPrefix(k, prefix); ok && o.live && id != p.cfg.Instance && now.Sub(o.seen) < p.cfg.Lease {
			live = append(live, id)
		}
	}
	slices.Sort(live)
	return live
}

// shed gives up the highest-numbered held partitions above target: it
// stops acting on each (its work's context cancelled, OnRelease) and
// deletes the lease, with a compare-and-set on its revision, once the work
// begun under it has ended.
func (p *Partitions) shed(ctx context.Context, target int) {
	p.mu.Lock()
	held := sortedKeys(p.held)
	var drop []*lease
	for len(held) > target {
		n := held[len(held)-1]
		held = held[:len(held)-1]
		drop = append(drop, p.held[n])
		delete(p.held, n)
	}
	p.mu.Unlock()
	if len(drop) == 0 {
		return
	}
	p.giveUp(drop)
	p.finishLeaving(ctx)
}

// claim takes free partitions until this instance holds target. A
// partition is free when its key is absent or deleted, or when its lease
// has shown the same revision here for a whole lease: its holder has then
// stopped acting on it. Each claim is a compare-and-set on the revision
// seen, so of several claimants one wins.
func (p *Partitions) claim(ctx context.Context, target int) {
	now := time.Now()
	for n := range p.cfg.Partitions {
		p.mu.Lock()
		if len(p.held) >= target {
			p.mu.Unlock()
			return
		}
		_, mine := p.held[n]
		if _, left := p.leaving[n]; left {
			mine = true // not before its work ended and it was deleted
		}
		o, known := p.view[p.partitionKey(n)]
		p.mu.Unlock()
		if mine || known && o.live && now.Sub(o.seen) < p.cfg.Lease {
			continue
		}
		sent := time.Now()
		var rev uint64
		var err error
		op, cancel := p.op(ctx)
		if !known || !o.live {
			rev, err = p.cfg.KeyValue.Create(op, p.partitionKey(n), []byte(p.cfg.Instance))
		} else {
			rev, err = p.cfg.KeyValue.Update(op, p.partitionKey(n), []byte(p.cfg.Instance), o.rev)
		}
		cancel()
		if err != nil {
			continue // taken by another claimant, or NATS is unreachable: next round
		}
		p.mu.Lock()
		l := &lease{n: n, token: rev, rev: rev, validUntil: sent.Add(p.cfg.Lease - p.margin)}
		p.held[n] = l
		p.arm(l)
		p.mu.Unlock()
		p.acquired(n, rev)
	}
}

func (p *Partitions) acquired(n int, token uint64) {
	if p.cfg.OnAcquire != nil {
		p.cfg.OnAcquire(n, token)
	}
	for _, s := range p.subscribers() {
		if s.acquire != nil {
			s.acquire(n, token)
		}
	}
}

func (p *Partitions) released(n int) {
	if p.cfg.OnRelease != nil {
		p.cfg.OnRelease(n)
	}
	for _, s := range p.subscribers() {
		if s.release != nil {
			s.release(n)
		}
	}
}

// adopt reads partition n's key after a renewal was refused: when it still
// names this instance at a later revision than l's (a renewal that landed
// but whose answer was lost) it takes that revision for l. p.mu is held;
// it is released around the read.
func (p *Partitions) adopt(ctx context.Context, n int, l *lease) adoption {
	p.mu.Unlock()
	op, cancel := p.op(ctx)
	e, err := p.cfg.KeyValue.Get(op, p.partitionKey(n))
	cancel()
	p.mu.Lock()
	switch {
	case errors.Is(err, jetstream.ErrKeyNotFound):
		return leaseLost
	case err != nil:
		return leaseUnknown
	case e.Operation() != jetstream.KeyValuePut || string(e.Value()) != p.cfg.Instance || e.Revision() <= l.rev:
		return leaseLost
	}
	l.rev = e.Revision()
	return leaseAdopted
}

// adoption is what a read of a lease whose renewal was refused found.
type adoption int

const (
	// leaseUnknown: the bucket could not be read.
	leaseUnknown adoption = iota
	// leaseAdopted: the lease names this instance at a later revision.
	leaseAdopted
	// leaseLost: the lease is gone or names another instance.
	leaseLost
)
