package aggregate

import (
	"context"

	"github.com/factum-go/factum"
)

type commandKey struct{}

// deciding is what a handler's context carries: the command and the
// effects the handler binds (one value, so a decision costs one context).
type deciding struct {
	cmd     *factum.Command
	effects []Effect
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
