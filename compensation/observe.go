package compensation

import "context"

// AttemptObserver learns of each retry of an execution (a scheduler's or
// an operator's ForceRetry), as a tracer does to make a span of it: the
// retry's prepare, re-delivery and recording run in the context
// StartAttempt returns, and EndAttempt gets that context, the retry's
// report (its outcome, attempt number and the function's error) and the
// retry's own error (a prepare refused, an outcome left unrecorded).
type AttemptObserver interface {
	StartAttempt(ctx context.Context, it Item, force bool) context.Context
	EndAttempt(ctx context.Context, a Attempt, err error)
}

// retry runs one retry of it under the AttemptObserver, if any.
func (c *Compensation) retry(ctx context.Context, b *bound, it Item, force bool) (Attempt, error) {
	if c.attempts == nil {
		return c.retryOnce(ctx, b, it, force)
	}
	ctx = c.attempts.StartAttempt(ctx, it, force)
	a, err := c.retryOnce(ctx, b, it, force)
	c.attempts.EndAttempt(ctx, a, err)
	return a, err
}
