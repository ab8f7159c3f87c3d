package aggregate

// Internal marks the aggregate type as internal: one the framework or the
// application keeps for itself, such as compensation's execution_failed
// records. The gateway serves its commands as any other's, but public APIs
// (package httpapi) route none of its commands and none of its reads: to
// them the type does not exist. Its operator actions go through routes of
// their own.
func Internal[S any]() Option[S] {
	return func(d *Definition[S]) { d.internal = true }
}

// InternalCommand marks the handler's command as internal: sent by the
// application or the framework through the gateway, never routed from a
// public API (package httpapi answers it as an unknown command).
func InternalCommand() CommandOption { return func(c *CommandSpec) { c.Internal = true } }

// IsInternal reports whether the type was defined with Internal.
func (d *Definition[S]) IsInternal() bool { return d.internal }

// Public reports whether public APIs may route to the type: false for a
// type whose IsInternal method (Definition's, or any Type's that has one)
// reports true.
func Public(t Type) bool {
	i, ok := t.(interface{ IsInternal() bool })
	return !ok || !i.IsInternal()
}
