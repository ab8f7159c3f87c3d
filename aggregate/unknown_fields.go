package aggregate

// AllowUnknownFields lets the aggregate's command bodies carry JSON fields
// their command types do not have; the HTTP API then ignores them instead
// of refusing the body with 400 BadRequest. Strict is the default because
// a misspelt field silently dropped is a command that does something else
// than its sender meant; allow unknown fields for clients that send newer
// bodies to older servers.
func AllowUnknownFields[S any]() Option[S] {
	return func(d *Definition[S]) { d.unknownFields = true }
}

// AllowsUnknownFields reports whether AllowUnknownFields was given.
func (d *Definition[S]) AllowsUnknownFields() bool { return d.unknownFields }
