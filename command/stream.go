package command

import (
	"context"
	"iter"

	"github.com/factum-go/factum"
)

// SendAndWaitStream returns a sequence that, when ranged over, sends cmd and
// yields every result on the way to the plan's stage, in stage order: SENT,
// PROCESSED, then each branch signal. Each element's error is nil exactly
// when its Result succeeded, so consumers check every element. The sequence
// ends after the plan's stage, the first failure, the timeout or ctx's end
// (a RequestTimeout result, the outcome unknown), or when the consumer
// stops ranging; the wait is removed in every case. Branch signals that
// arrive before PROCESSED are held back until it.
func (g *Gateway) SendAndWaitStream(ctx context.Context, cmd factum.Command, plan WaitPlan) iter.Seq2[Result, error] {
	return func(yield func(Result, error) bool) {
		stopped := false
		emit := func(r Result, err error) bool {
			if stopped {
				return false
			}
			stopped = !yield(r, err)
			return !stopped
		}
		g.run(ctx, &cmd, plan, emit, func(r Result, err error, emitted bool) {
			if !emitted {
				emit(r, err)
			}
		})
	}
}
