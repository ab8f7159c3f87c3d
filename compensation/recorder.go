package compensation

import (
	"context"
	"errors"
	"fmt"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/command"
	"github.com/factum-go/factum/event"
)

var _ event.FailureRecorder = (*Compensation)(nil)

// RecordFailure implements event.FailureRecorder: it records f as a
// failure of the execution of f.Function on f.EventID (created by the
// first record, a further failure by later ones) and returns nil only once
// the execution's stream is appended (PROCESSED). Any error, including a
// wait that timed out, leaves the consumer where it is, so the stream is
// delivered again rather than the failure lost.
//
// Failures of functions on execution streams themselves (the snapshotter
// of this aggregate, say) are logged and not recorded: recording them
// would append more execution streams for the same functions to fail on,
// without end.
func (c *Compensation) RecordFailure(ctx context.Context, f event.Failure) error {
	b, err := c.runtime()
	if err != nil {
		return err
	}
	if f.Stream.AggregateID.NamedAggregate == c.named {
		c.log.Error("compensation: a function failed on an execution stream; not recorded",
			"function", f.Function.String(), "stream", f.Stream.ID, "err", f.Err)
		return nil
	}
	eventID := f.EventID
	if eventID == "" {
		eventID = f.Stream.ID
	}
	at := f.Time
	if at.IsZero() {
		at = c.now()
	}
	id := c.idOf(ExecutionID(f.Function, eventID), f.Stream.AggregateID.TenantOrDefault())
	body := recordExecutionFailure{
		FailedEvent: FailedEvent{EventID: eventID, EventName: eventName(&f.Stream, eventID), Aggregate: f.Stream.AggregateID,
			Version: f.Stream.Version, Function: f.Function, Stage: f.Stage},
		Error:     ErrorInfoOf(cause(f.Err)),
		RetrySpec: c.RetrySpecFor(f.Function), Recoverability: c.classify(f.Err), At: TimeOf(at),
	}
	// A fresh request ID: every record is a failure of its own. Deriving
	// it from the failure (its time, its attempts) would merge two
	// consumers' failures that share a clock reading into one. The price
	// is that a record re-sent after a wait that timed out may count once
	// more, which overstates nothing that matters.
	cmd := factum.NewCommand(id, body)
	// Internal: a consumer records a failure as part of work already
	// accepted, which a shutting-down gateway must still let finish.
	if _, err := b.gateway.SendAndWait(command.Internal(ctx), cmd, command.Wait(factum.StageProcessed)); err != nil {
		return fmt.Errorf("compensation: record failure of %s on event %s: %w", f.Function, eventID, err)
	}
	return nil
}

func eventName(s *factum.EventStream, eventID string) string {
	for i := range s.Events {
		if s.Events[i].ID == eventID {
			return s.Events[i].Name
		}
	}
	return ""
}

// cause drops the event.EventError wrapper naming the failed event: the
// execution keeps the event ID in a field of its own.
func cause(err error) error {
	var ee *event.EventError
	if errors.As(err, &ee) && ee.Err != nil {
		return ee.Err
	}
	return err
}
