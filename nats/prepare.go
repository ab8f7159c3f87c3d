package nats

import "github.com/factum-go/factum"

// Preparer is implemented by executors that decode a command's body ahead
// of its processing (the executors of package aggregate do). A command
// delivered from the stream carries its body as JSON (json.RawMessage);
// the bus calls Prepare on it where it decodes the message, on the
// partition's pull goroutine, before the command enters its lane. A lane
// processes its commands one at a time, so decoding there would hold up
// every command queued behind; decoded on the way in, the body is
// decoded once, the lane finding it typed, as a command accepted by this
// instance's gateway is.
//
// Prepare replaces the body by its decoded value when it decodes into the
// type the command's handler takes, and leaves the command as it is
// otherwise (a body that does not decode, a command name or aggregate
// type the executor does not handle), so that the processing refuses it
// as it would without Prepare. It must be safe for concurrent use: each
// partition's pull goroutine calls it. A Prepare that panics leaves the
// command's body as it was delivered.
type Preparer interface {
	Prepare(cmd *factum.Command)
}

// Prepare implements Preparer by the wrapped executor's, if it has one,
// so that every wrapper originExecutor returns passes it on.
func (o origin) Prepare(cmd *factum.Command) {
	if p, ok := o.next.(Preparer); ok {
		p.Prepare(cmd)
	}
}

// prepare decodes the bodies of cmds, commands delivered from the stream,
// by the executor's Preparer, if it has one.
func (b *Bus) prepare(cmds ...*factum.Command) {
	p, ok := b.proc.(Preparer)
	if !ok {
		return
	}
	for _, c := range cmds {
		b.prepareOne(p, c)
	}
}

// prepareOne calls p's Prepare on cmd. A Prepare that panics leaves the
// body as it was delivered, for the processing to meet as it would
// without Prepare: its panic, on the partition's pull goroutine, would
// end the process, and, the message staying on the stream, every next
// owner's in turn.
func (b *Bus) prepareOne(p Preparer, cmd *factum.Command) {
	body := cmd.Body
	defer func() {
		if r := recover(); r != nil {
			cmd.Body = body
			b.cfg.Logger.Error("nats: decoding a delivered command's body panicked; it stays as delivered", "command", cmd.ID, "name", cmd.Name, "panic", r)
		}
	}()
	p.Prepare(cmd)
}
