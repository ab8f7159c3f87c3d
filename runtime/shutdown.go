package runtime

import (
	"context"
	"errors"
	"time"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/command"
)

// Shutdown stops the runtime in order, so that nothing accepted is lost
// and the work it set off runs to its end:
//
//  1. The gateway stops admitting commands from clients at once (they fail
//     with TooManyRequests wrapping command.ErrClosed).
//  2. Accepted commands are processed, and the consumers handle the
//     streams they append. Commands that sagas send meanwhile are still
//     admitted and processed, and their streams handled, until the log
//     and the lanes are quiet: no command in flight, every consumer at the
//     end of the log.
//  3. The dispatcher and the consumers stop.
//
// If ctx ends first, it stops where it is: queued commands get a failed
// PROCESSED signal (not appended), consumers stop after the stream in hand
// (the rest is handled after a restart, from their checkpoints), and
// Shutdown returns an error wrapping ctx's. A second Shutdown is an error.
func (r *Runtime) Shutdown(ctx context.Context) error {
	r.mu.Lock()
	if r.stopped {
		r.mu.Unlock()
		return factum.Errorf(factum.CodeIllegalState, "%w", ErrStopped)
	}
	r.stopped = true
	started := r.started
	r.mu.Unlock()
	r.gateway.Close()
	var quiet error
	if started {
		quiet = r.quiesce(ctx)
	}
	err := r.dispatcher.Shutdown(ctx)
	return errors.Join(quiet, err, r.group.stop(ctx))
}

// quiesce returns once the lanes are idle and every consumer's checkpoint
// is at the end of the log, seen twice in a row with nothing moving in
// between (a saga that handled the last stream may have sent a command;
// its stream then moves the end of the log), or when ctx ends.
func (r *Runtime) quiesce(ctx context.Context) error {
	wait := 200 * time.Microsecond
	quietOnce := false
	var last []factum.Position
	for {
		pos, atEnd, err := r.consumersAtEnd(ctx)
		if err != nil {
			return err
		}
		quiet := atEnd && r.dispatcher.Idle()
		if quiet && quietOnce && samePositions(pos, last) {
			return nil
		}
		quietOnce, last = quiet, pos
		t := time.NewTimer(wait)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		}
		wait = min(2*wait, 10*time.Millisecond)
	}
}

// consumersAtEnd returns the consumers' checkpoints and whether the log
// holds nothing after any of them.
func (r *Runtime) consumersAtEnd(ctx context.Context) ([]factum.Position, bool, error) {
	out := make([]factum.Position, 0, len(r.consumers))
	atEnd := true
	for _, c := range r.consumers {
		pos, err := r.checkpoints.Checkpoint(ctx, c.Processor().Name())
		if err != nil {
			return nil, false, err
		}
		out = append(out, pos)
		if atEnd {
			more, err := r.store.ReadLog(ctx, pos, 1)
			if err != nil {
				return nil, false, err
			}
			atEnd = len(more) == 0
		}
	}
	return out, atEnd, nil
}

func samePositions(a, b []factum.Position) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// internalSender is the gateway as sagas see it: their commands are
// admitted during a shutdown, so that what the appended work sets off is
// not refused half-way.
type internalSender struct{ g *command.Gateway }

func (s internalSender) Send(ctx context.Context, cmd factum.Command) (command.Result, error) {
	return s.g.Send(command.Internal(ctx), cmd)
}
