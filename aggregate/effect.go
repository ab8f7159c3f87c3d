package aggregate

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/factum-go/factum"
)

// Effect is a reservation-style side effect that a command handler binds to
// its command's append instead of performing it: reserving a unique key,
// releasing one, moving one to another key. Handlers may run more than
// once for one command (the executor re-runs them after a version
// conflict, and a retried request runs them again), so a handler that did
// such things itself would do them twice or leave them behind when the
// append fails. A bound effect is applied by the executor after the
// handler decided and before the append; it is undone if the append fails
// or is retried, and kept when the stream is appended.
//
// The prepare package's Key.Reserve, Key.Release and Key.Change make
// effects for prepare keys.
type Effect interface {
	// Apply makes the effect. It reports applied=false, with a nil error,
	// when it finds the effect already in place for the same owner (a
	// retry of the same command finding its own reservation): the command
	// goes on, and Undo is then not called, since what was there before
	// is not this attempt's to take away. An error refuses the command: a
	// business error (such as a taken key, an IllegalState) or an
	// infrastructure one.
	Apply(ctx context.Context) (applied bool, err error)
	// Undo reverses an Apply that reported applied=true.
	Undo(ctx context.Context) error
}

// Bind binds effects to the command the handler with ctx is deciding: the
// executor applies them, in order, before the append (see Effect). A
// handler calls it and returns its events; it performs no side effect
// itself. Outside a handler run by Decide, DecideEffects or an Executor it
// returns an IllegalState error.
func Bind(ctx context.Context, effs ...Effect) error {
	c, _ := ctx.Value(commandKey{}).(*deciding)
	if c == nil {
		return factum.IllegalState("aggregate.Bind: not called from a command handler")
	}
	for _, e := range effs {
		if e == nil {
			return factum.IllegalArgument("aggregate.Bind: nil effect")
		}
	}
	c.effects = append(c.effects, effs...)
	return nil
}

// undoTimeout bounds undoing the effects of one attempt, which runs even
// when the command's context has ended.
const undoTimeout = 10 * time.Second

// Applied is the effects one attempt of a command applied, in order.
type Applied struct{ list []Effect }

// ApplyEffects applies effs in order. On the first error it undoes those
// it applied (in reverse order) and returns the error, joined with any
// undo error. The executor and aggregatetest use it.
func ApplyEffects(ctx context.Context, effs []Effect) (*Applied, error) {
	a := &Applied{}
	for _, e := range effs {
		ok, err := e.Apply(ctx)
		if err != nil {
			if uerr := a.Undo(ctx); uerr != nil {
				err = errors.Join(err, uerr)
			}
			return nil, err
		}
		if ok {
			a.list = append(a.list, e)
		}
	}
	return a, nil
}

// Undo undoes the applied effects in reverse order, on a context that keeps
// ctx's values but not its cancellation (bounded to 10 s): the undo of a
// failed append must run even when the command's context ended. It tries
// every effect and returns their errors joined; an effect it could not
// undo is left in place, where a retry of the same command recognises it.
// Undo on a nil *Applied does nothing.
func (a *Applied) Undo(ctx context.Context) error {
	if a == nil || len(a.list) == 0 {
		return nil
	}
	uctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), undoTimeout)
	defer cancel()
	var errs []error
	for i := len(a.list) - 1; i >= 0; i-- {
		if err := a.list[i].Undo(uctx); err != nil {
			errs = append(errs, err)
		}
	}
	a.list = nil
	if len(errs) > 0 {
		return fmt.Errorf("aggregate: undo bound effects: %w", errors.Join(errs...))
	}
	return nil
}

// DecideEffects is Decide that also returns the effects the handler bound
// with Bind, unapplied, in order. Decide itself discards them: it is for
// callers that only want the decision.
func (d *Definition[S]) DecideEffects(ctx context.Context, st *State[S], cmd *factum.Command) ([]any, []Effect, error) {
	return d.decide(ctx, st, cmd)
}
