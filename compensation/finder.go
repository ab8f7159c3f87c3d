package compensation

import (
	"context"
	"errors"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/event"
)

var _ event.FailureFinder = (*Compensation)(nil)

// FindFailure implements event.FailureFinder: the error of the execution of
// fn on one of s's events (or on the stream, for a failure that named no
// event) that has not SUCCEEDED, with the code recorded; nil when there is
// none, or it succeeded since, or was dismissed (deleted).
func (c *Compensation) FindFailure(ctx context.Context, fn factum.Function, s *factum.EventStream) (error, error) {
	svc := c.Service()
	ids := make([]string, 0, len(s.Events)+1)
	for i := range s.Events {
		ids = append(ids, s.Events[i].ID)
	}
	ids = append(ids, s.ID)
	for _, eventID := range ids {
		d, err := svc.Get(ctx, ExecutionID(fn, eventID))
		switch {
		case errors.Is(err, factum.ErrNotFound):
			continue
		case err != nil:
			return nil, err
		}
		if d.Deleted || d.Execution.Status == StatusSucceeded {
			return nil, nil
		}
		code := d.Execution.Error.Code
		if code == "" || code == factum.CodeOk {
			code = factum.CodeInternalServerError
		}
		return factum.NewError(code, d.Execution.Error.Message), nil
	}
	return nil, nil
}
