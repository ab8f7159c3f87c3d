package aggregate

import (
	"context"

	"github.com/factum-go/factum"
)

type commandKey struct{}

// CommandFrom returns the command a handler is deciding, from the context
// the handler receives: its aggregate ID (derived, for a create command
// sent without one), IDs, header and owner. Outside a handler it returns
// nil. The command is read-only.
func CommandFrom(ctx context.Context) *factum.Command {
	c, _ := ctx.Value(commandKey{}).(*factum.Command)
	return c
}
