package nats

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/factum-go/factum"
	"github.com/nats-io/nats.go/jetstream"
)

// partState is what the bus knows of one partition: the claim it acts
// under and the commands of it in process. A command starts only under
// the claim it was admitted under, so a partition given up or lost is
// never acted on again by this instance, and release waits for the ones
// already started.
type partState struct {
	// claim mirrors token and catchingUp for the senders, who read it
	// without the lock: the token shifted left by one, the lowest bit set
	// while catching up, 0 while this instance does not act on the
	// partition. It is written under mu, from the fields it mirrors.
	claim atomic.Uint64
	// lease is the end of the claim's lease as last read from the
	// Partitions, for the lanes to check without asking them per command.
	lease atomic.Pointer[leaseEnd]

	mu        sync.Mutex
	token     uint64 // 0 while this instance does not act on the partition
	running   int
	inflight  map[uint64]jetstream.Msg        // stream sequence -> its latest delivery, not yet finished
	touched   map[factum.AggregateID]struct{} // aggregates processed under token
	delivered uint64                          // the highest stream sequence delivered here
	copies    map[string]*localCopy           // LocalDurable: by command ID
	// catchingUp holds from a claim until its consumer delivered every
	// command stored before it: meanwhile a command accepted here is
	// published (behind them) rather than queued, which would overtake
	// them. fwdInflight and fwdSeq are those publishes in flight and the
	// highest stream sequence they stored at.
	catchingUp  bool
	fwdInflight int
	fwdSeq      uint64
	// crossing counts the sends of the partition's commands accepted here
	// that found no claim here (see forward) and are not yet stored (or
	// failed): one may wait in its aggregate's outbox (see sendCoalesced)
	// while this instance takes the partition and be stored after its
	// claim's consumer looked at the stream. A claim catches up only once
	// none is left, and the stream sequences they stored at count in
	// fwdSeq, so that such a command is delivered before a later one of
	// its sender is admitted here.
	crossing int
	// queued counts the commands of the partition accepted here and stored
	// nowhere (LocalFirst) that a lane holds or is settling: while any is,
	// a new one follows them through the lanes, so that the ones handed
	// over to the stream when their claim ended (see handOver) are not
	// overtaken by it.
	queued atomic.Int64
	// handed holds the stream sequences of the commands handed over to the
	// stream here and not yet processed here under the claim: while any
	// is, a command accepted here does not run before it (see enter).
	// Cleared by a new claim, whose consumer delivers them before the
	// claim admits commands here.
	handed map[uint64]struct{}
	// handedMax is the highest stream sequence a command of the partition
	// was handed over at here, under any claim, never cleared: the drain
	// (see quiet) waits for the handed subjects' consumer up to it, since a
	// command accepted before the drain and handed over during it is
	// stored beyond the stream's last sequence the drain read.
	handedMax uint64
	// stored counts the partition's other jobs in the lanes (delivered
	// commands, LocalDurable's copies). While queued or stored is not
	// zero when the claim ends, the claim's lease is held (hold, taken
	// by onRelease, ended by settled), so that the next owner starts only
	// after the lanes handed their jobs over.
	stored  atomic.Int64
	holding atomic.Bool // hold is set; written under mu
	hold    Work
}

// leaseEnd is a claim's lease as the Partitions reported it: until start
// (counted from the bus's epoch, on the monotonic clock) a command may
// start under token. Renewals only move the end later, and every way a
// claim ends early (given up, lost, lapsed) goes through release, which
// clears the claim first: so an end read once stays a safe bound for its
// token.
type leaseEnd struct {
	token uint64
	start time.Duration // the lease's validity less the guard
}

// claimed returns the claim this instance acts on the partition under (0
// for none) and whether it is catching up, without the lock.
func (st *partState) claimed() (token uint64, catchingUp bool) {
	c := st.claim.Load()
	return c >> 1, c&1 != 0
}

// mirror publishes token and catchingUp to the senders. st.mu is held.
func (st *partState) mirror() {
	c := st.token << 1
	if st.token != 0 && st.catchingUp {
		c |= 1
	}
	st.claim.Store(c)
}

// onAcquire is acquire, the claim then published to the senders. Until
// then the mirror says "catching up", which sends the senders to the
// fields under the lock (forward): acquire may start a catching up.
func (b *Bus) onAcquire(n int, token uint64) {
	if n >= len(b.state) {
		return
	}
	st := &b.state[n]
	st.mu.Lock()
	st.claim.Store(token<<1 | 1)
	if st.token != token {
		st.handed = nil
	}
	st.mu.Unlock()
	b.acquire(n, token)
	st.mu.Lock()
	st.mirror()
	st.mu.Unlock()
}

// onRelease is release, the senders told first: from then on they send
// the partition's commands to its next owner instead of queueing them here.
func (b *Bus) onRelease(n int) {
	if n < len(b.state) {
		st := &b.state[n]
		st.mu.Lock()
		old := st.token
		st.token = 0
		st.mirror()
		st.lease.Store(nil)
		st.mu.Unlock()
		b.holdFor(n, old)
	}
	b.release(n)
}

// holdFor holds the lease of partition n's claim token, which just ended,
// while jobs of the partition are in the lanes: the Partitions delete a
// lease given up only once the work held on it ended, so the next owner,
// which delivers the commands handed over first, starts after the lanes
// handed theirs over. It runs on the lease goroutine, within OnRelease,
// before the Partitions may delete the lease. A lease that lapsed cannot be
// held: its next owner may start while the lanes still hand over.
func (b *Bus) holdFor(n int, token uint64) {
	st := &b.state[n]
	if b.cfg.Local != LocalFirst {
		// Only LocalFirst hands jobs over; the other modes leave them on
		// the stream, where the next owner finds them in order.
		return
	}
	if token == 0 || st.queued.Load() == 0 && st.stored.Load() == 0 {
		return
	}
	w, ok := b.parts.hold(n, token)
	if !ok {
		return
	}
	st.mu.Lock()
	if st.holding.Load() {
		// An earlier claim's hold is still set (its lease may have been
		// dropped to lapse since): this claim's lease is the one the next
		// owner waits for, so it takes the hold's place.
		old := st.hold
		st.hold = w
		st.mu.Unlock()
		old.End()
		b.unhold(n)
		return
	}
	st.hold = w
	st.holding.Store(true)
	st.mu.Unlock()
	// The lanes may have settled the last job before the hold was set.
	b.unhold(n)
}

// counter returns the count of j's kind of jobs of its partition in the
// lanes: queued for a command accepted here and stored nowhere, stored
// for any other.
func (b *Bus) counter(j *job) *atomic.Int64 {
	if j.local() {
		return &b.state[j.n].queued
	}
	return &b.state[j.n].stored
}

// settled counts down j leaving the lanes, and ends the hold on its
// partition's lease after the last job. The count comes down before the
// hold is looked at, and holdFor sets the hold before it looks at the
// counts: one of them sees the other's write.
func (b *Bus) settled(j *job) {
	if b.counter(j).Add(-1) == 0 && b.state[j.n].holding.Load() {
		b.unhold(j.n)
	}
}

// unhold ends the hold on partition n's lease if no job of it is left in
// the lanes.
func (b *Bus) unhold(n int) {
	st := &b.state[n]
	st.mu.Lock()
	if !st.holding.Load() || st.queued.Load() != 0 || st.stored.Load() != 0 {
		st.mu.Unlock()
		return
	}
	w := st.hold
	st.hold = Work{}
	st.holding.Store(false)
	st.mu.Unlock()
	w.End()
}

// caughtUp ends the catching up of partition n under token once nothing
// is pending on its consumer beyond what was delivered (pending is the
// consumer's count of undelivered commands) and every command published
// while catching up, or crossing (see partState.crossing), was stored and
// delivered.
func (b *Bus) caughtUp(n int, token uint64, pending uint64) {
	st := &b.state[n]
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.token == token && pending == 0 && st.fwdInflight == 0 && st.crossing == 0 && st.delivered >= st.fwdSeq {
		st.catchingUp = false
		st.mirror()
	}
}

// forward publishes a command accepted here for partition n while its
// claim catches up, and reports the claim this instance acts on the
// partition under (0 for none) and whether it published the command
// (false: queue it here under that claim, or publish it when there is
// none). The claim and its catching up are read together, under the lock:
// the senders' mirror only steers them here. With no claim (token 0) the
// send crosses to the partition's owner: it is counted in
// partState.crossing, and the caller reports its end to crossed.
func (b *Bus) forward(ctx context.Context, cmd *factum.Command, n int) (token uint64, fwd bool, err error) {
	st := &b.state[n]
	st.mu.Lock()
	token = st.token
	if token == 0 {
		st.crossing++
	}
	if token == 0 || !st.catchingUp {
		st.mu.Unlock()
		return token, false, nil
	}
	st.fwdInflight++
	st.mu.Unlock()
	seq, err := b.publishSeq(ctx, cmd, n, true)
	st.mu.Lock()
	st.fwdInflight--
	st.fwdSeq = max(st.fwdSeq, seq)
	st.mu.Unlock()
	return token, true, err
}

// crossed ends a crossing send of partition n counted by forward: seq is
// the stream sequence its command was stored at, 0 when it was not. A
// claim catching up waits for its delivery (see caughtUp).
func (b *Bus) crossed(n int, seq uint64) {
	st := &b.state[n]
	st.mu.Lock()
	st.crossing--
	st.fwdSeq = max(st.fwdSeq, seq)
	st.mu.Unlock()
}

// ownsNow reports whether this instance acts on partition n now, with
// enough of the lease left to start a command, and under which claim.
func (b *Bus) ownsNow(n int) (uint64, bool) {
	st := &b.state[n]
	st.mu.Lock()
	t := st.token
	st.mu.Unlock()
	if t == 0 {
		return 0, false
	}
	token, until, ok := b.parts.Lease(n)
	if !ok || token != t || time.Until(until) <= b.guard {
		return 0, false
	}
	return t, true
}

// localClaim reports whether a command accepted here for partition n
// goes to the lanes (LocalFirst), and under which claim: the claim this
// instance acts on it under, once caught up with the stream; or none (0)
// while commands of it accepted here under a claim that ended are still
// in the lanes, to be handed over to the stream behind them.
func (b *Bus) localClaim(n int) (uint64, bool) {
	st := &b.state[n]
	if token, catchingUp := st.claimed(); token != 0 && !catchingUp {
		return token, true
	}
	return 0, st.queued.Load() != 0
}

// claimOf returns the claim this instance acts on partition n under, 0
// for none.
func (b *Bus) claimOf(n int) uint64 {
	t, _ := b.state[n].claimed()
	return t
}

// enter marks j's command as started if its claim still holds, waiting
// while the claim is short of time (a renewal is due): a job skipped
// while the partition is still this instance's would let later commands
// of its aggregate pass it. A command accepted here and stored nowhere
// does not start either while a command of its partition handed over to
// the stream here is not yet processed here (or still on its way): it
// could be an earlier one of its aggregate, which it would overtake, even
// when delivered already (the delivery queues behind it in the lane); it
// is handed over behind it instead.
func (b *Bus) enter(j *job) bool {
	if !b.leaseHolds(j.n, j.token) && !b.awaitClaim(b.runCtx, j.n, j.token) {
		return false
	}
	st := &b.state[j.n]
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.token != j.token {
		return false
	}
	if j.local() && (st.fwdInflight != 0 || len(st.handed) != 0) {
		return false
	}
	st.running++
	return true
}

// leaseHolds reports, from the lease end last read, whether a command may
// start on partition n under token now, with more than the guard left.
// False means "ask the Partitions" (awaitClaim), not "no".
func (b *Bus) leaseHolds(n int, token uint64) bool {
	l := b.state[n].lease.Load()
	return l != nil && l.token == token && time.Since(b.epoch) < l.start
}

// awaitClaim reports whether this instance may act on partition n under
// the claim token, with more than the guard left of its lease. While the
// lease is short of time but not given up (its renewal is late), it waits:
// until a renewal extends it (true), or the claim is released, lost or
// replaced (false, which the lease goroutine reports within a quarter
// lease), or ctx ends or the shutdown is cut short (false). The lease end
// it reads is kept for leaseHolds.
func (b *Bus) awaitClaim(ctx context.Context, n int, token uint64) bool {
	st := &b.state[n]
	for {
		st.mu.Lock()
		cur := st.token
		st.mu.Unlock()
		if token == 0 || cur != token {
			return false
		}
		if t, until, ok := b.parts.Lease(n); ok && t == token {
			start := until.Sub(b.epoch) - b.guard
			if time.Since(b.epoch) < start {
				b.keepLease(st, token, start)
				return true
			}
		}
		if ctx.Err() != nil || b.aborted.Load() {
			return false
		}
		time.Sleep(time.Millisecond)
	}
}

// keepLease records the lease end of st's claim token, unless the claim
// ended meanwhile or a later end is known.
func (b *Bus) keepLease(st *partState, token uint64, start time.Duration) {
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.token != token {
		return
	}
	if l := st.lease.Load(); l != nil && l.token == token && l.start >= start {
		return
	}
	st.lease.Store(&leaseEnd{token: token, start: start})
}
