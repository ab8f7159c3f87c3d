package engine

import (
	"context"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/event"
)

// progress implements command.Progress from the runtime's consumers: a
// function has handled a stream once its consumer group's checkpoint is at
// or past the stream; whether it failed there the consumer remembers, or
// else the failure recorder finds (when it is an event.FailureFinder, as
// compensation is).
type progress struct{ r *Engine }

func (p progress) Handled(ctx context.Context, fn factum.Function, s *factum.EventStream) (bool, error, error) {
	group := factum.Function{Context: fn.Context, Processor: fn.Processor}
	var c *event.Consumer
	for _, k := range p.r.consumers {
		if k.Processor().Name() == group {
			c = k
			break
		}
	}
	if c == nil {
		// Not this runtime's function: another instance runs it, and this
		// one cannot see how far it got.
		return false, nil, nil
	}
	pos, err := p.r.checkpoints.Checkpoint(ctx, group)
	if err != nil {
		return false, nil, err
	}
	if pos.Less(s.Position) {
		return false, nil, nil
	}
	if failure := c.FailureOn(s.ID, fn); failure != nil {
		return true, failure, nil
	}
	if ff, ok := p.r.failures.(event.FailureFinder); ok {
		failure, err := ff.FindFailure(ctx, fn, s)
		if err != nil {
			return false, nil, err
		}
		return true, failure, nil
	}
	return true, nil, nil
}
