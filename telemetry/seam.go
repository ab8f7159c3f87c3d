package telemetry

import (
	"context"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/event"
)

// SEAM (temporary): these three declarations are identical to
// aggregate.CommandFunc, aggregate.Middleware and event.Middleware, which
// are being added on another branch. At merge each becomes an alias of the
// real type (type CommandFunc = aggregate.CommandFunc, and so on) or is
// removed in favour of it; nothing else in the package changes.

// CommandFunc processes one command; the outcome is its PROCESSED signal.
type CommandFunc func(ctx context.Context, cmd *factum.Command) factum.Signal

// CommandMiddleware wraps the processing of one aggregate type's commands.
type CommandMiddleware func(named factum.NamedAggregate, next CommandFunc) CommandFunc

// EventMiddleware wraps one event function; h is read-only.
type EventMiddleware func(h *event.Handler, next event.StreamFunc) event.StreamFunc
