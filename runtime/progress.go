package runtime

import (
	"context"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/event"
)

// progress implements command.Progress from the runtime's consumers: a
// function has handled a stream once its consumer group's checkpoint is at
// or past the stream, and the consumer remembers whether it failed there.
type progress struct{ r *Runtime }

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
	return true, c.FailureOn(s.ID, fn), nil
}
