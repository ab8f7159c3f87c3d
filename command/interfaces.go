package command

import (
	"context"

	"github.com/factum-go/factum"
)

// Consumers tells the gateway which event functions consume a command's
// events, so that a branch-stage wait knows whose signals to wait for and
// completes at once when nobody consumes them. The event side's function
// registry implements it; a nil Consumers means none.
type Consumers interface {
	// FunctionsFor returns the functions that report stage for a stream
	// of the aggregate type holding events with these names. The aggregate
	// type is passed because functions may be restricted to source
	// aggregates. The gateway only reads the slice returned, so an
	// implementation may return the same slice to many calls.
	FunctionsFor(stage factum.CommandStage, aggregate factum.NamedAggregate, eventNames []string) []factum.Function
}

// Bus carries commands from the gateway to the processors. Send returns
// once the bus accepted the command (SENT): in process, when a dispatcher
// lane queued it. A send that fails has not been accepted.
type Bus interface {
	Send(ctx context.Context, cmd *factum.Command) error
}

// Executor runs one command and reports its PROCESSED outcome;
// *aggregate.Registry's processor implements it.
type Executor interface {
	Process(ctx context.Context, cmd *factum.Command) factum.Signal
}
