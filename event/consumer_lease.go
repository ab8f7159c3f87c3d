package event

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"
)

// leaseFence is the lease a consumer runs under and until when it may act
// on it: the TTL less a fifth after it sent the request that granted or
// last renewed it, which is before the store lets anyone else take it.
type leaseFence struct {
	lease      Lease
	validUntil atomic.Int64 // Unix nanoseconds
	// lost is set once the store said so or the fence was found lapsed,
	// and stays set: the consumer steps down and takes the lease again.
	lost atomic.Bool
}

// valid reports whether the consumer may still act; a nil fence always.
// Once it said no it never says yes again, even when a renewal sent in
// time is answered afterwards: the run that saw the lapse has stopped,
// and the consumer must treat the lease as lost rather than stopped.
func (f *leaseFence) valid() bool {
	if f == nil {
		return true
	}
	if f.lost.Load() {
		return false
	}
	if time.Now().UnixNano() < f.validUntil.Load() {
		return true
	}
	f.lost.Store(true)
	return false
}

// lose marks the lease lost, as a refused renewal or fenced save shows.
func (f *leaseFence) lose() {
	if f != nil {
		f.lost.Store(true)
	}
}

func (f *leaseFence) extend(sent time.Time, ttl time.Duration) {
	f.validUntil.Store(sent.Add(ttl - ttl/5).UnixNano())
}

// runLeased takes the group's lease, consumes under it, and takes it again
// when it is lost, until ctx ends or, after Drain, the log is consumed or
// another instance holds the lease. Each lease it took it releases once
// its run under it ends; the store leaves one no longer current alone.
func (c *Consumer) runLeased(ctx context.Context) error {
	group := c.proc.Name()
	ttl := c.cfg.LeaseTTL
	failures := 0
	for ctx.Err() == nil {
		sent := time.Now()
		l, err := c.cfg.Leases.Acquire(ctx, group, c.cfg.Holder, ttl)
		switch {
		case errors.Is(err, ErrLeaseHeld):
			failures = 0
			if c.drain.Err() != nil {
				return nil // another instance consumes the group
			}
			c.sleepOrDrain(ctx, ttl/3)
			continue
		case err != nil:
			if ctx.Err() != nil {
				return nil
			}
			failures++
			c.cfg.Logger.Error("event: acquire lease", "group", group.String(), "err", err)
			sleep(ctx, backoff(c.cfg.Backoff, failures))
			continue
		}
		failures = 0
		fence := &leaseFence{lease: l}
		fence.extend(sent, ttl)
		lctx, cancel := context.WithCancel(ctx)
		var wg sync.WaitGroup
		wg.Go(func() { c.renew(lctx, cancel, fence) })
		err = c.run(lctx, fence)
		lost := ctx.Err() == nil && (lctx.Err() != nil || !fence.valid())
		cancel()
		wg.Wait()
		// Stopped, drained or stepped down, the consumer no longer acts
		// under l: give it up at once. A lease the store still grants
		// (its fence lapsed while a renewal was on its way, or before the
		// store's expiry) would otherwise hold the group up until it
		// expires, this instance too, as Acquire refuses the same holder,
		// and a drain would take it for another instance's and return.
		rctx, rcancel := context.WithTimeout(context.WithoutCancel(ctx), ttl/3)
		if rerr := c.cfg.Leases.Release(rctx, l); rerr != nil {
			c.cfg.Logger.Error("event: release lease", "group", group.String(), "err", rerr)
		}
		rcancel()
		if !lost {
			return err
		}
		if err != nil {
			return err
		}
		c.cfg.Logger.Warn("event: lease lost; taking it again", "group", group.String())
	}
	return nil
}

// renew renews the fence's lease three times per TTL until ctx ends. When
// the lease is lost, or it lapses for want of a renewal, it cancels the
// consumer's run.
func (c *Consumer) renew(ctx context.Context, stop context.CancelFunc, fence *leaseFence) {
	ttl := c.cfg.LeaseTTL
	t := time.NewTicker(ttl / 3)
	defer t.Stop()
	for {
		// Wake at the fence's end too: a renewal stuck in a slow store
		// must not keep the consumer acting past it.
		lapse := time.NewTimer(time.Until(time.Unix(0, fence.validUntil.Load())))
		select {
		case <-ctx.Done():
			lapse.Stop()
			return
		case <-lapse.C:
			if !fence.valid() {
				stop()
				return
			}
			continue
		case <-t.C:
		}
		lapse.Stop()
		sent := time.Now()
		rctx, cancel := context.WithTimeout(ctx, ttl/3)
		_, err := c.cfg.Leases.Renew(rctx, fence.lease, ttl)
		cancel()
		switch {
		case err == nil:
			fence.extend(sent, ttl)
			if !fence.valid() {
				stop() // answered after the fence lapsed: the consumer stepped down
				return
			}
		case errors.Is(err, ErrLeaseLost) || !fence.valid():
			fence.lose()
			stop()
			return
		case ctx.Err() == nil:
			c.cfg.Logger.Error("event: renew lease", "group", c.proc.Name().String(), "err", err)
		}
	}
}

// sleepOrDrain waits d, or until ctx ends or Drain is called.
func (c *Consumer) sleepOrDrain(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	case <-c.drain.Done():
	}
}
