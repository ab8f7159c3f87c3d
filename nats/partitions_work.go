package nats

import (
	"context"
	"fmt"
	"time"
)

// tenure is the context that work on a partition runs under for one
// stretch of a claim: it is cancelled the moment the instance can no
// longer be sure of the claim.
type tenure struct {
	parent context.Context // the parent of merged
	merged context.Context // done when parent is or the tenure ends
	// cancels cancel merged and every earlier merged context of the
	// tenure, at its end: at once, so that the end of a claim, once
	// reported, is seen by the work under way.
	cancels []context.CancelFunc
}

// Work is one piece of work begun on a partition under a claim (see
// Begin). End it exactly once.
type Work struct {
	p *Partitions
	l *lease
}

// Begin starts one piece of work (a command) on the partition under the
// claim token, if that claim is in force: it returns a context derived
// from parent that is also cancelled the moment this instance can no
// longer be sure of the claim (its validity, Lease less the safety margin
// after the last renewal sent, runs out without a renewal; the partition
// is given up or lost; Close), and the Work to End when the work is over.
//
// Giving a partition up (rebalancing, Close) cancels that context, then
// keeps renewing the lease until every Work begun under it has ended, and
// only then deletes the lease, for at most one more lease: the next owner
// starts after the work ended. A claim whose renewals fail cannot wait:
// its context is cancelled at the end of its validity, a safety margin
// before anyone else can take the partition, and work must stop within
// that margin. Work that ignores its context past either bound is left to
// the event store's version check.
func (p *Partitions) Begin(parent context.Context, partition int, token uint64) (context.Context, Work, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	l := p.held[partition]
	if !l.inForce(time.Now()) || l.token != token {
		return nil, Work{}, false
	}
	if l.work.merged == nil || l.work.parent != parent {
		// Once per tenure and parent: the bus passes the same one.
		m, cancel := context.WithCancel(parent)
		l.work.parent, l.work.merged = parent, m
		l.work.cancels = append(l.work.cancels, cancel)
	}
	l.running++
	return l.work.merged, Work{p: p, l: l}, true
}

// hold begins work on the partition under the claim token, as Begin
// does, also when the partition is being given up (its lease is still
// renewed, and deleted once the work ended, after at most one more
// lease): the bus holds the lease this way while its lanes hand a claim's
// commands over. The work has no context: it runs nothing.
func (p *Partitions) hold(partition int, token uint64) (Work, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	l := p.held[partition]
	if l == nil {
		l = p.leaving[partition]
	}
	if !l.inForce(time.Now()) || l.token != token {
		return Work{}, false
	}
	l.running++
	return Work{p: p, l: l}, true
}

// End ends the work. When the partition is being given up and this was
// its last work, the lease goroutine deletes the lease at once.
func (w Work) End() {
	if w.l == nil {
		return
	}
	w.p.mu.Lock()
	w.l.running--
	last := w.l.running == 0 && w.l.leaving
	w.p.mu.Unlock()
	if last {
		w.p.kick()
	}
}

// inForce reports whether the lease lets its holder act now. l may be nil.
func (l *lease) inForce(now time.Time) bool {
	return l != nil && !l.lapsed && !l.expired && now.Before(l.validUntil)
}

// end cancels the lease's tenure: work under it must stop. p.mu is held.
func (l *lease) end() {
	for _, cancel := range l.work.cancels {
		cancel()
	}
	l.work = tenure{}
}

// drop forgets the lease for good: it is deleted, lost or left to lapse.
// p.mu is held.
func (l *lease) drop() {
	l.end()
	l.dropped = true
	if l.timer != nil {
		l.timer.Stop()
	}
}

// arm sets the lease's timer for the end of its validity. p.mu is held.
func (p *Partitions) arm(l *lease) {
	d := time.Until(l.validUntil)
	if l.timer == nil {
		l.timer = time.AfterFunc(d, func() { p.expire(l) })
		return
	}
	l.timer.Reset(d)
}

// expire runs when the lease's validity may have ended: unless a renewal
// extended it meanwhile (then it waits for the new end), the tenure is
// cancelled at once, not at the lease goroutine's next round. If work was
// running under it, the claim is over: the lease goroutine is woken to
// report the lapse (OnRelease), and a renewal that still lands starts a
// new claim, so that the work cut off is done again in order by a new
// consumer rather than overtaken by the commands queued behind it.
func (p *Partitions) expire(l *lease) {
	p.mu.Lock()
	if l.dropped {
		p.mu.Unlock()
		return
	}
	if d := time.Until(l.validUntil); d > 0 {
		l.timer.Reset(d)
		p.mu.Unlock()
		return
	}
	if l.leaving || l.lapsed || l.running == 0 {
		// Nothing to cut off: Owns is false already, and a renewal that
		// still lands resumes the claim as it was, its queued commands
		// in order.
		l.end()
		p.mu.Unlock()
		return
	}
	// Work runs under a claim this instance can no longer be sure of:
	// it is cancelled now, and the claim is over (see resume).
	l.end()
	l.expired = true
	p.mu.Unlock()
	p.kick()
}

// kick wakes the lease goroutine to settle.
func (p *Partitions) kick() {
	select {
	case p.kicks <- struct{}{}:
	default:
	}
}

// settle runs on the lease goroutine: it reports the lapse of leases whose
// validity ended, gives everything up once Close began, and deletes the
// leases given up whose work ended.
func (p *Partitions) settle(ctx context.Context) {
	p.mu.Lock()
	var lapsed, give []*lease
	for _, n := range sortedKeys(p.held) {
		l := p.held[n]
		if l.expired && !l.lapsed {
			l.lapsed, l.expired = true, false
			lapsed = append(lapsed, l)
		}
	}
	closing := p.closing
	if closing {
		for _, n := range sortedKeys(p.held) {
			give = append(give, p.held[n])
			delete(p.held, n)
		}
	}
	p.mu.Unlock()
	for _, l := range lapsed {
		p.released(l.n)
	}
	p.giveUp(give)
	p.finishLeaving(ctx)
	if closing {
		p.mu.Lock()
		if len(p.held) == 0 && len(p.leaving) == 0 && !p.drainedClosed {
			p.drainedClosed = true
			close(p.drained)
		}
		p.mu.Unlock()
	}
}

// giveUp stops acting on leases removed from held: their tenure is
// cancelled, OnRelease is called (unless a lapse called it already), and
// they wait in leaving, still renewed, until their work ended.
func (p *Partitions) giveUp(ls []*lease) {
	now := time.Now()
	for _, l := range ls {
		p.mu.Lock()
		l.end()
		l.leaving, l.leftAt = true, now
		p.leaving[l.n] = l
		notify := !l.lapsed
		p.mu.Unlock()
		if notify {
			p.released(l.n)
		}
	}
}

// finishLeaving deletes the leases given up whose work has ended, with a
// compare-and-set on their revision. One whose work still runs after a
// lease, or that could not be renewed in time, is left to lapse.
func (p *Partitions) finishLeaving(ctx context.Context) {
	now := time.Now()
	p.mu.Lock()
	var del []*lease
	for _, n := range sortedKeys(p.leaving) {
		l := p.leaving[n]
		switch {
		case l.running == 0:
			del = append(del, l)
		case !now.Before(l.validUntil) || now.Sub(l.leftAt) >= p.cfg.Lease:
			if p.closing {
				p.errs = append(p.errs, fmt.Errorf("nats: partition %d of %s left to lapse: %d of its commands still run", n, p.cfg.Context, l.running))
			}
		default:
			continue
		}
		delete(p.leaving, n)
		l.drop()
	}
	closing := p.closing
	p.mu.Unlock()
	for _, l := range del {
		op, cancel := p.op(ctx)
		err := p.release(op, l.n, l.rev)
		cancel()
		if err != nil && closing {
			p.mu.Lock()
			p.errs = append(p.errs, err)
			p.mu.Unlock()
		}
	}
}

// renewLeaving renews the leases given up whose work still runs, so that
// no one takes them before it ended.
func (p *Partitions) renewLeaving(ctx context.Context) {
	p.mu.Lock()
	ls := make([]*lease, 0, len(p.leaving))
	for _, n := range sortedKeys(p.leaving) {
		ls = append(ls, p.leaving[n])
	}
	p.mu.Unlock()
	for _, l := range ls {
		sent := time.Now()
		op, cancel := p.op(ctx)
		rev, err := p.cfg.KeyValue.Update(op, p.partitionKey(l.n), []byte(p.cfg.Instance), l.rev)
		cancel()
		p.mu.Lock()
		if l.dropped {
			p.mu.Unlock()
			continue
		}
		switch {
		case err == nil:
			l.rev = rev
			l.validUntil = sent.Add(p.cfg.Lease - p.margin)
		case isRevisionMismatch(err):
			if p.adopt(ctx, l.n, l) == leaseLost && !l.dropped {
				delete(p.leaving, l.n)
				l.drop()
			}
		}
		p.mu.Unlock()
	}
}
