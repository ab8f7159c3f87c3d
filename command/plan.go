package command

import (
	"fmt"
	"time"

	"github.com/factum-go/factum"
)

// DefaultTimeout is how long a wait lasts when its plan names no timeout.
const DefaultTimeout = 30 * time.Second

// WaitPlan says what a caller waits for: a stage, optionally one function
// (blank parts of Function are wildcards) and a timeout. The zero Timeout
// means the gateway's default. A timeout ends the wait, not the command: its
// outcome is then unknown (look it up with Gateway.Lookup).
type WaitPlan struct {
	// Stage is the stage to wait for.
	Stage factum.CommandStage
	// Function restricts a branch stage to the functions it matches.
	Function factum.Function
	// Timeout bounds the wait; 0 means the gateway's default.
	Timeout time.Duration
}

// Wait returns a plan that waits for stage.
func Wait(stage factum.CommandStage) WaitPlan { return WaitPlan{Stage: stage} }

// For returns a copy of p restricted to the functions fn matches.
func (p WaitPlan) For(fn factum.Function) WaitPlan {
	p.Function = fn
	return p
}

// Within returns a copy of p with the timeout d.
func (p WaitPlan) Within(d time.Duration) WaitPlan {
	p.Timeout = d
	return p
}

// check validates the plan against the gateway's cap and returns the
// effective timeout.
func (p WaitPlan) check(def, maxTimeout time.Duration) (time.Duration, error) {
	if !p.Stage.Valid() {
		return 0, factum.IllegalArgument(fmt.Sprintf("wait plan: invalid stage %d", uint8(p.Stage)))
	}
	if !p.Function.IsZero() && !p.Stage.IsBranch() {
		return 0, factum.IllegalArgument(fmt.Sprintf("wait plan: a function target needs a branch stage, not %s", p.Stage))
	}
	switch {
	case p.Timeout < 0:
		return 0, factum.IllegalArgument("wait plan: negative timeout")
	case p.Timeout == 0:
		return def, nil
	case maxTimeout > 0 && p.Timeout > maxTimeout:
		return 0, factum.IllegalArgument(fmt.Sprintf("wait plan: timeout %v exceeds the maximum %v", p.Timeout, maxTimeout))
	}
	return p.Timeout, nil
}
