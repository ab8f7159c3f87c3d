package command

import (
	"context"

	"github.com/factum-go/factum"
)

// waitKey is the context key of a waitCtx.
type waitKey struct{}

// waitCtx is a context carrying the stage a send's wait is for: one
// allocation, the context and its value together.
type waitCtx struct {
	context.Context
	id    string
	stage factum.CommandStage
}

func (c *waitCtx) Value(key any) any {
	if key == (waitKey{}) {
		return c
	}
	return c.Context.Value(key)
}

// WithWaitStage returns a copy of ctx that carries stage as the stage the
// gateway waits for on the command commandID. The gateway hands the bus
// every send's command in such a context (SENT for Send), so that a bus
// that carries commands to other processes can tell the command's
// processors which of its signals the wait uses (see WaitUses).
func WithWaitStage(ctx context.Context, commandID string, stage factum.CommandStage) context.Context {
	return &waitCtx{Context: ctx, id: commandID, stage: stage}
}

// sending is a command the gateway sends, beside the context its bus
// gets it in: one allocation for both, so that naming a send's wait
// costs the send none.
type sending struct {
	cmd  factum.Command
	wait waitCtx
}

// withWait returns ctx carrying stage as the wait of s's command, as
// WithWaitStage does, in s's own room. The context lives as long as the
// command does.
func (s *sending) withWait(ctx context.Context, stage factum.CommandStage) context.Context {
	s.wait = waitCtx{Context: ctx, id: s.cmd.ID, stage: stage}
	return &s.wait
}

// WaitStage returns the stage ctx carries for the command commandID (see
// WithWaitStage) and true, or false when it carries none for that command.
// It is keyed by the command: a context derived from a send's that
// reaches the send of another command (one an executor or a saga sends)
// tells that send nothing.
func WaitStage(ctx context.Context, commandID string) (factum.CommandStage, bool) {
	c, _ := ctx.Value(waitKey{}).(*waitCtx)
	if c == nil || c.id != commandID {
		return 0, false
	}
	return c.stage, true
}

// WaitUses reports whether a wait for the stage wait, as the gateway runs
// it, can use a signal of the stage stage of its command. A wait for SENT
// uses none: it ends when the bus accepts the command, and it waits for no
// signal. A wait for PROCESSED uses PROCESSED and none of the branch
// stages: SendAndWait and SendAndWaitStream end at PROCESSED. A wait for a
// branch stage uses every signal: SendAndWait uses PROCESSED and its
// stage's, and SendAndWaitStream yields every branch signal on the way to
// its stage. A wait or a signal of no valid stage (0: not known) uses
// every signal, so that a signal is only ever left out for a wait known
// not to use it.
func WaitUses(wait, stage factum.CommandStage) bool {
	switch {
	case !wait.Valid() || !stage.Valid():
		return true
	case wait == factum.StageSent:
		return false
	case wait == factum.StageProcessed:
		return !stage.IsBranch()
	}
	return true
}
