package event

import (
	"context"
	"time"

	"github.com/factum-go/factum"
)

// attemptDeadlines is one consumer lane's delivery state: the context a
// function's chain gets, which carries the results the function adds
// (AddResult), the attempts Retry makes and the stream's tenant, and the
// contexts that bound one attempt for Timeout. A timeout context per
// attempt (a timer and two allocations, then a cancel) cost more than a
// fast in-memory projection itself, so one context serves consecutive
// attempts as long as its deadline is at least the timeout less 1/64 of it
// away (the bound an attempt gets is between 98.4 % and 100 % of the
// timeout); a fresh one is made otherwise (the last one is cancelled
// then). A consumer that keeps up handles a stream or two per read, so the
// context also outlives its batch: it is cancelled when a new one replaces
// it, when the consumer's wait for appends times out (nothing came for
// PollInterval, or less when a checkpoint is due), and when Run returns. A
// function must therefore not use its context after it returned: it is not
// cancelled at once.
type attemptDeadlines struct {
	parent   context.Context
	timeout  time.Duration // the one ctx was made for
	ctx      context.Context
	cancel   context.CancelFunc
	deadline time.Time

	// The results of the function running, reused, emptied, for each
	// function; resCtx is resBase (the deadline context) carrying them,
	// for the same reason.
	res     *results
	resBase context.Context
	resCtx  context.Context

	// cur is the contexts of the stream in hand's tenant (one of tenants,
	// the lane's per tenant it met): a lane's streams get their tenant's
	// contexts without an allocation each.
	cur     *tenantLane
	tenants map[string]*tenantLane
}

// start returns the context for one delivery of s to a function, carrying
// s's tenant, and its results, emptied.
func (d *attemptDeadlines) start(s *factum.EventStream) (context.Context, *results) {
	if d.res == nil {
		d.res = &results{lane: d}
	} else {
		d.res.take() // what an earlier function left unsent
	}
	d.res.attempts = 0
	if t := s.AggregateID.TenantOrDefault(); d.cur == nil || t != d.cur.tenant {
		d.cur = d.tenantLane(t)
	}
	return d.cur.outer, d.res
}

// bounded returns the context for one attempt bounded by timeout, carrying
// the lane's results and the stream's tenant.
func (d *attemptDeadlines) bounded(timeout time.Duration) context.Context {
	base := d.get(timeout)
	if d.resBase != base {
		d.resCtx = context.WithValue(base, resultKey{}, d.res)
		d.resBase = base
	}
	return d.cur.bounded(d.resCtx)
}

func (d *attemptDeadlines) get(timeout time.Duration) context.Context {
	if d.ctx == nil || d.timeout != timeout || time.Until(d.deadline) < timeout-timeout/64 {
		d.release()
		d.ctx, d.cancel = context.WithTimeout(d.parent, timeout)
		d.deadline, _ = d.ctx.Deadline()
		d.timeout = timeout
	}
	return d.ctx
}

// release cancels the current context, if any.
func (d *attemptDeadlines) release() {
	if d.cancel != nil {
		d.cancel()
		d.ctx, d.cancel = nil, nil
	}
}
