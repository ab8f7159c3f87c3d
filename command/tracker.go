package command

import (
	"slices"
	"strings"
	"time"

	"github.com/factum-go/factum"
)

// tracker follows one command's signals toward a wait plan's stage. It
// implements the stage rules: a failed PROCESSED ends every wait; a branch
// stage is reached only after a successful PROCESSED, when every function
// that consumes the events and matches the target has signalled (at once
// when none does); a failed branch signal of a required function ends the
// wait.
type tracker struct {
	g    *Gateway
	plan WaitPlan
	cmd  *factum.Command
	// deadline is when the wait times out.
	deadline time.Time

	// processed and last are held by value (with flags) so that tracking a
	// wait allocates nothing.
	processed    Result
	hasProcessed bool
	last         Result
	hasLast      bool
	pending      []factum.Signal   // signals that came before PROCESSED
	required     []factum.Function // read only: may be the registry's slice
	got          uint64            // bit i: required[i] signalled (up to 64)
	gotMore      []bool            // the same for more than 64 functions
}

// feed takes one signal. It reports the final result once the wait is over
// and whether that result was already passed to emit.
func (t *tracker) feed(s *factum.Signal, emit func(*Result) bool) (final Result, done, emitted bool) {
	if s.Stage == factum.StageProcessed {
		if t.hasProcessed {
			return Result{}, false, false // a redelivered signal
		}
		t.processed, t.hasProcessed = resultOf(s), true
		t.last, t.hasLast = t.processed, true
		if emit != nil {
			// Only this path lets a copy escape to emit; the common
			// wait without a stream allocates nothing here.
			r := t.processed
			if !emit(&r) {
				return r, true, true
			}
		}
		r := &t.processed
		if !r.Succeeded() || t.plan.Stage == factum.StageProcessed {
			return *r, true, true
		}
		if r.Duplicate {
			d := *r
			d.Note = "duplicate request: answered at PROCESSED with its first attempt's outcome; its branch stages belong to that attempt"
			return d, true, false
		}
		if fin, ok := t.resolve(); ok {
			return fin, true, false
		}
		pending := t.pending
		t.pending = nil
		for i := range pending {
			if fin, done, emitted := t.branch(&pending[i], emit); done {
				return fin, true, emitted
			}
		}
		return Result{}, false, false
	}
	if !t.hasProcessed {
		t.pending = append(t.pending, *s)
		return Result{}, false, false
	}
	return t.branch(s, emit)
}

// resolve asks the registry which functions the wait needs; with none, the
// wait is complete.
func (t *tracker) resolve() (Result, bool) {
	p := &t.processed
	if t.g.consumers != nil {
		fns := t.g.consumers.FunctionsFor(t.plan.Stage, t.cmd.AggregateID.NamedAggregate, p.EventNames)
		if t.plan.Function.IsZero() {
			// No target: every consumer is required. The slice is only
			// read, so it need not be copied.
			t.required = fns
		} else {
			for _, fn := range fns {
				if fn.Matches(t.plan.Function) {
					t.required = append(t.required, fn)
				}
			}
		}
	}
	if len(t.required) > 0 {
		if len(t.required) > 64 {
			t.gotMore = make([]bool, len(t.required))
		}
		return Result{}, false
	}
	r := *p
	r.Stage = t.plan.Stage
	r.Function = t.plan.Function
	r.Note = "no function consumes " + strings.Join(p.EventNames, ", ") + " at " + t.plan.Stage.String() + "; completed after PROCESSED"
	return r, true
}

// mark records that required function i signalled and reports whether all
// have.
func (t *tracker) mark(i int) bool {
	if t.gotMore != nil {
		t.gotMore[i] = true
		return !slices.Contains(t.gotMore, false)
	}
	t.got |= 1 << i
	return t.got == 1<<len(t.required)-1
}

// lastResult returns the last result the wait reached, or nil.
func (t *tracker) lastResult() *Result {
	if !t.hasLast {
		return nil
	}
	return &t.last
}

func (t *tracker) branch(s *factum.Signal, emit func(*Result) bool) (Result, bool, bool) {
	r := resultOf(s)
	if r.AggregateVersion == 0 {
		r.AggregateVersion = t.processed.AggregateVersion
	}
	if r.EventNames == nil {
		r.EventNames = t.processed.EventNames
	}
	if emit != nil {
		// Only this path lets a copy escape to emit.
		e := r
		if !emit(&e) {
			return r, true, true
		}
	}
	if s.Stage != t.plan.Stage {
		return Result{}, false, false
	}
	idx := -1
	for i, fn := range t.required {
		if fn == s.Function {
			idx = i
			break
		}
	}
	if idx < 0 {
		return Result{}, false, false
	}
	t.last, t.hasLast = r, true
	if !r.Succeeded() {
		return r, true, true
	}
	if !t.mark(idx) {
		return Result{}, false, false
	}
	return r, true, true
}
