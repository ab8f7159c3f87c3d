package aggregate

import "github.com/factum-go/factum"

// Prepare decodes the body of a command that carries its JSON (one that
// crossed a process boundary) into its handler's command type, in place,
// so that the handler finds it decoded: a transport calls it where it
// decodes a command it delivers, before the command waits for its
// aggregate's turn, whose processing is serial. A body that does not decode
// stays as it is, and processing refuses the command as it would without
// Prepare; so does a command of another aggregate type or one the type
// has no handler for. It is safe for concurrent use, on commands no one
// else holds.
func (p *processor[S]) Prepare(cmd *factum.Command) {
	if cmd.AggregateID.NamedAggregate != p.def.named {
		return
	}
	h, ok := p.def.handlers[cmd.Name]
	if !ok {
		return
	}
	if v, ok := h.prepare(cmd.Body); ok {
		cmd.Body = v
	}
}

// Prepare decodes the body of a command as the executor of its aggregate
// type does (see processor.Prepare); a command of a type the router does
// not hold stays as it is.
func (r router) Prepare(cmd *factum.Command) {
	if p, ok := r[cmd.AggregateID.NamedAggregate].(interface{ Prepare(*factum.Command) }); ok {
		p.Prepare(cmd)
	}
}
