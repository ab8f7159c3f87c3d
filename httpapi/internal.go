package httpapi

import "github.com/factum-go/factum/aggregate"

// internalNames returns the command and event names no public route
// serves: every command of an internal aggregate type and every internal
// command, and the events internal types source. The OpenAPI document
// leaves them out, as the routes do.
func (h *Handler) internalNames() map[string]bool {
	hidden := map[string]bool{}
	for _, t := range h.rt.Registry().Types() {
		public := aggregate.Public(t)
		for _, spec := range t.Commands() {
			if !public || spec.Internal {
				hidden[spec.Name] = true
			}
		}
		if sourced, ok := t.(interface{ SourcedEvents() []string }); ok && !public {
			for _, name := range sourced.SourcedEvents() {
				hidden[name] = true
			}
		}
	}
	// Names a public type uses stay visible, even if an internal one
	// shares them (the built-in delete and recover commands).
	for _, t := range h.types {
		for _, spec := range t.Commands() {
			if !spec.Internal {
				delete(hidden, spec.Name)
			}
		}
		if sourced, ok := t.(interface{ SourcedEvents() []string }); ok {
			for _, name := range sourced.SourcedEvents() {
				delete(hidden, name)
			}
		}
	}
	return hidden
}
