package engine

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/command"
)

// Shutdown stops the runtime in order, so that nothing accepted is lost
// and the work it set off runs to its end:
//
//  0. The components (Config.Components) stop, in reverse order.
//  1. The gateway stops admitting commands from clients at once (they fail
//     with TooManyRequests wrapping command.ErrClosed).
//  2. Accepted commands are processed, and the consumers handle the
//     streams they append. Commands that sagas send meanwhile are still
//     admitted and processed, and their streams handled, until the log
//     and the lanes are quiet: no command in flight, every consumer at the
//     end of the log.
//  3. The dispatcher and the consumers stop, and the executor ends the
//     goroutines it keeps for runs.
//
// If ctx ends first, it stops where it is: queued commands get a failed
// PROCESSED signal (not appended), consumers stop after the stream in hand
// (the rest is handled after a restart, from their checkpoints), and
// Shutdown returns an error wrapping ctx's. A second Shutdown is an error.
func (r *Engine) Shutdown(ctx context.Context) error {
	r.mu.Lock()
	if r.stopped {
		r.mu.Unlock()
		return factum.Errorf(factum.CodeIllegalState, "%w", ErrStopped)
	}
	r.stopped = true
	started := r.started
	r.mu.Unlock()
	// Components send through the gateway, as HTTP does: they stop first.
	errComponents := r.components.stop(ctx)
	r.gateway.Close()
	var quiet error
	if started {
		// Leave a fifth of the time to stop the lanes and the consumers
		// gracefully should the work not settle.
		qctx := ctx
		if deadline, ok := ctx.Deadline(); ok {
			var cancel context.CancelFunc
			qctx, cancel = context.WithDeadline(ctx, deadline.Add(-time.Until(deadline)/5))
			defer cancel()
		}
		if err := r.quiesce(qctx); err != nil {
			quiet = fmt.Errorf("runtime: the accepted work did not settle: %w", err)
		}
	}
	err := r.bus.Shutdown(ctx)
	if s, ok := r.processor.(interface{ StopWorkers() }); ok {
		// The lanes have stopped: the goroutines the executor keeps for
		// runs end now rather than after their idle time.
		s.StopWorkers()
	}
	return errors.Join(errComponents, quiet, err, r.group.stop(ctx))
}

// quiesce returns once the work accepted before Close has run to its end,
// or when ctx ends. In rounds: it notes how many commands the lanes have
// finished and where the log ends, then waits until no admitted command is
// on its way to the lanes, the lanes are idle, and every consumer has
// passed that end (or has stopped). If no command ran during the round,
// nothing is left that this runtime set off; otherwise the commands it ran
// appended streams, perhaps past the noted end, and another round follows.
// Streams other instances append meanwhile do not hold it: they are theirs
// to finish, and these consumers take them up after a restart.
func (r *Engine) quiesce(ctx context.Context) error {
	for {
		finished := r.bus.Done()
		end, err := retry(ctx, r.logEnd)
		if err != nil {
			return err
		}
		if err := r.waitUntil(ctx, func(ctx context.Context) (bool, error) {
			if !r.gateway.Settled() || !r.bus.Idle() {
				return false, nil
			}
			return r.consumersPast(ctx, end)
		}); err != nil {
			return err
		}
		if r.bus.Done() == finished && r.bus.Idle() && r.gateway.Settled() {
			return nil
		}
	}
}

// logEnd returns the position of the log's last readable stream.
func (r *Engine) logEnd(ctx context.Context) (factum.Position, error) {
	var end factum.Position
	if len(r.consumers) == 0 {
		return end, nil // no consumer has to pass it: reading the log to its end is wasted
	}
	for i, c := range r.consumers {
		pos, err := r.checkpoints.Checkpoint(ctx, c.Processor().Name())
		if err != nil {
			return end, err
		}
		if i == 0 || end.Less(pos) {
			end = pos
		}
	}
	for {
		page, err := r.store.ReadLog(ctx, end, 1000)
		if err != nil || len(page) == 0 {
			return end, err
		}
		end = page[len(page)-1].Position
	}
}

// consumersPast reports whether every consumer still running has its
// checkpoint at or past end.
func (r *Engine) consumersPast(ctx context.Context, end factum.Position) (bool, error) {
	for i, c := range r.consumers {
		if r.group.exited(i) {
			continue
		}
		pos, err := r.checkpoints.Checkpoint(ctx, c.Processor().Name())
		if err != nil {
			return false, err
		}
		if pos.Less(end) {
			return false, nil
		}
	}
	return true, nil
}

// waitUntil polls cond, backing off to 10 ms, until it holds or ctx ends.
// A failing cond (a checkpoint store briefly unreachable) is polled again.
func (r *Engine) waitUntil(ctx context.Context, cond func(context.Context) (bool, error)) error {
	wait := 200 * time.Microsecond
	for {
		if ok, err := cond(ctx); err == nil && ok {
			return nil
		}
		if err := sleepCtx(ctx, wait); err != nil {
			return err
		}
		wait = min(2*wait, 10*time.Millisecond)
	}
}

// retry calls fn until it succeeds or ctx ends.
func retry[T any](ctx context.Context, fn func(context.Context) (T, error)) (T, error) {
	wait := time.Millisecond
	for {
		v, err := fn(ctx)
		if err == nil {
			return v, nil
		}
		if serr := sleepCtx(ctx, wait); serr != nil {
			return v, fmt.Errorf("%w (last error: %v)", serr, err)
		}
		wait = min(2*wait, 100*time.Millisecond)
	}
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// internalSender is the gateway as sagas see it: their commands are
// admitted during a shutdown, so that what the appended work sets off is
// not refused half-way.
type internalSender struct{ g *command.Gateway }

func (s internalSender) SendAndWait(ctx context.Context, cmd factum.Command, plan command.WaitPlan) (command.Result, error) {
	return s.g.SendAndWait(command.Internal(ctx), cmd, plan)
}
