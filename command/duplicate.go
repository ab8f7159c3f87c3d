package command

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/factum-go/factum"
)

// Progress tells a gateway how far an event function has got in the log,
// so that a repeated request asking for a branch stage waits for that
// stage on its first attempt's stream instead of answering at PROCESSED.
// The runtime implements it from its consumers' checkpoints.
type Progress interface {
	// Handled reports whether fn has handled stream s: its consumer
	// group's checkpoint is at or past s. failure is the error fn failed
	// with on s, when known (a failure recorded for compensation); nil
	// with done means it succeeded or its failure is no longer known. err
	// reports that progress could not be read.
	Handled(ctx context.Context, fn factum.Function, s *factum.EventStream) (done bool, failure error, err error)
}

// Bounds of the polling a duplicate's branch-stage wait does: the first
// look is immediate, then the interval doubles up to the maximum.
const (
	duplicatePollMin = time.Millisecond
	duplicatePollMax = 50 * time.Millisecond
)

// awaitDuplicate answers a repeated request (dup, its first attempt's
// PROCESSED outcome) for the plan's stage. For SENT and PROCESSED it is dup.
// For a branch stage it waits, within timeout, until every function that
// consumes the first attempt's events (narrowed by the plan's target) has
// handled that stream: the read-after-write the caller asked for holds on a
// retry too. A function's recorded failure fails the wait; the timeout or
// ctx's end leaves the outcome unknown (RequestTimeout).
func (g *Gateway) awaitDuplicate(ctx context.Context, c *factum.Command, plan WaitPlan, dup Result, timeout time.Duration) (Result, error) {
	if !plan.Stage.IsBranch() {
		return dup, nil
	}
	var fns []factum.Function
	if g.consumers != nil {
		for _, fn := range g.consumers.FunctionsFor(plan.Stage, dup.AggregateID.NamedAggregate, dup.EventNames) {
			if plan.Function.IsZero() || fn.Matches(plan.Function) {
				fns = append(fns, fn)
			}
		}
	}
	if len(fns) == 0 {
		r := dup
		r.Stage, r.Function = plan.Stage, plan.Function
		r.Note = "duplicate request: no function consumes " + strings.Join(dup.EventNames, ", ") + " at " + plan.Stage.String() + "; completed after its first attempt's PROCESSED"
		return r, nil
	}
	if g.progress == nil {
		r := dup
		r.Note = "duplicate request: answered at PROCESSED with its first attempt's outcome; this gateway cannot see the branch stages"
		return r, nil
	}
	wctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	s, err := g.store.Lookup(wctx, dup.AggregateID, dup.RequestID)
	if err != nil {
		return g.unknown(c, plan, &dup, fmt.Sprintf("duplicate request: cannot read its first attempt's stream: %v", err), ctx.Err())
	}
	pending := fns
	poll := duplicatePollMin
	var last Result
	for {
		left := pending[:0:0]
		for _, fn := range pending {
			done, failure, err := g.progress.Handled(wctx, fn, &s)
			switch {
			case err != nil || !done:
				left = append(left, fn)
				continue
			case failure != nil:
				fe := factum.AsError(failure)
				r := dup
				r.Stage, r.Function = plan.Stage, fn
				r.Code, r.Message, r.Bindings = fe.Code, factum.MessageOf(failure), fe.Bindings
				r.Note = "duplicate request: its first attempt's stream failed at this function"
				r.SignalTime = time.Now()
				return r, r.Err()
			}
			last = dup
			last.Stage, last.Function = plan.Stage, fn
		}
		pending = left
		if len(pending) == 0 {
			last.Note = "duplicate request: its first attempt's stream has reached " + plan.Stage.String()
			last.SignalTime = time.Now()
			return last, nil
		}
		t := time.NewTimer(poll)
		select {
		case <-t.C:
		case <-wctx.Done():
			t.Stop()
			cause := ctx.Err()
			return g.unknown(c, plan, &dup, fmt.Sprintf("duplicate request: its first attempt's stream did not reach %s within %v (waiting for %s); the outcome is unknown", plan.Stage, timeout, pending[0]), cause)
		}
		poll = min(2*poll, duplicatePollMax)
	}
}
