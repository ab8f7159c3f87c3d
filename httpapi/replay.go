package httpapi

import "slices"

// CommandResponseHeaders lists the response headers of the command routes
// that say which command, request, aggregate and version an answer is
// about. A replay of a stored answer (idempotency.Middleware) must carry
// them as the first answer did: give them, with the middleware's defaults,
// as its ReplayHeaders.
func CommandResponseHeaders() []string {
	return []string{HeaderCommandID, HeaderRequestID, HeaderAggregateID, HeaderAggregateVersion}
}

// ReplayHeaders returns defaults (such as idempotency.DefaultReplayHeaders)
// followed by CommandResponseHeaders.
func ReplayHeaders(defaults []string) []string {
	return append(slices.Clone(defaults), CommandResponseHeaders()...)
}
