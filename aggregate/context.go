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
//
// The handler's context also carries the command's tenant
// (factum.TenantFromContext), so that what a handler reaches with it, such
// as a prepare.PerTenant key, is scoped to that tenant without being told.
func CommandFrom(ctx context.Context) *factum.Command {
	c, _ := ctx.Value(commandKey{}).(*factum.Command)
	return c
}

// handlerContext is the context a handler decides cmd in.
func handlerContext(ctx context.Context, cmd *factum.Command) context.Context {
	return factum.ContextWithTenant(context.WithValue(ctx, commandKey{}, cmd), cmd.AggregateID.TenantOrDefault())
}
