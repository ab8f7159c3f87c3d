package aggregate

import (
	"context"

	"github.com/factum-go/factum"
)

type commandKey struct{}

// deciding is a handler's context: its parent, the command and the
// effects the handler binds, in one allocation (as a plain value context
// would take for the command alone).
type deciding struct {
	context.Context
	cmd     *factum.Command
	effects []Effect
}

// Value returns the deciding itself for commandKey, and the parent's
// values for every other key.
func (d *deciding) Value(key any) any {
	if key == (commandKey{}) {
		return d
	}
	return d.Context.Value(key)
}

// CommandFrom returns the command a handler is deciding, from the context
// the handler receives: its aggregate ID (derived, for a create command
// sent without one), IDs, header and owner. Outside a handler it returns
// nil. The command is read-only.
func CommandFrom(ctx context.Context) *factum.Command {
	if d, _ := ctx.Value(commandKey{}).(*deciding); d != nil {
		return d.cmd
	}
	return nil
}
