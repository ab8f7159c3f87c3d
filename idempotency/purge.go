package idempotency

import (
	"context"
	"time"

	"github.com/factum-go/factum"
)

// RunPurger calls p.Purge every interval until ctx is done, and returns
// ctx's error. A failed purge is reported to onError (when not nil) and
// retried at the next tick: expired records stay invisible meanwhile, so
// a late purge costs space, never correctness. Run it in its own
// goroutine.
func RunPurger(ctx context.Context, p Purger, interval time.Duration, onError func(error)) error {
	if interval <= 0 {
		return factum.IllegalArgument("idempotency: purge interval must be positive, got " + interval.String())
	}
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
			if _, err := p.Purge(ctx); err != nil && onError != nil && ctx.Err() == nil {
				onError(err)
			}
		}
	}
}
