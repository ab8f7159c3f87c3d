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
//
// The handler's context also carries the command's tenant
// (factum.TenantFromContext), so that what a handler reaches with it, such
// as a prepare.PerTenant key, is scoped to that tenant without being told.
func CommandFrom(ctx context.Context) *factum.Command {
	if d, _ := ctx.Value(commandKey{}).(*deciding); d != nil {
		return d.cmd
	}
	return nil
}

// handlerContext is the context a handler decides cmd in. The executor
// has put the command's tenant in ctx.
func handlerContext(ctx context.Context, cmd *factum.Command) *deciding {
	if _, ok := factum.TenantFromContext(ctx); !ok {
		ctx = factum.ContextWithTenant(ctx, cmd.AggregateID.TenantOrDefault())
	}
	return &deciding{Context: ctx, cmd: cmd}
}
