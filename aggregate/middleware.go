package aggregate

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"time"

	"github.com/factum-go/factum"
)

// CommandFunc processes one command; the outcome, success or failure, is
// its PROCESSED signal.
type CommandFunc func(ctx context.Context, cmd *factum.Command) factum.Signal

// Middleware wraps the processing of the commands of one aggregate type.
// It is called once per aggregate type, at engine.New, with that type's
// name, and returns the function that processes the type's commands from
// then on, calling next (or not) for each.
//
// An executor's chain runs, outermost first: the middleware of
// ExecutorConfig.Middleware (the engine's), those of the definition
// (WithMiddleware), then the defaults Recover and Retry around the
// processing itself. A middleware therefore sees each command once, with
// its final signal, whatever the retries under it; a panic under Recover
// reaches it as a failed signal, and a panic in a middleware itself is not
// recovered unless a Recover runs outside it.
//
// The commands of a run (command.RunExecutor) go through the chain concurrently,
// each in a goroutine of its own, one aggregate's commands starting in
// their order; each command's processing under the chain waits for the
// commands before it, as processing them one at a time would. A
// middleware that holds a command until others end (a bound on
// concurrent commands) only delays a run's group.
type Middleware func(named factum.NamedAggregate, next CommandFunc) CommandFunc

// WithMiddleware adds middleware to the definition: it wraps the processing
// of this type's commands only, inside the engine's middleware and outside
// the defaults (see Middleware). The first one given is the outermost.
func WithMiddleware[S any](mw ...Middleware) Option[S] {
	return func(d *Definition[S]) {
		for _, m := range mw {
			if m == nil {
				d.errs = append(d.errs, factum.IllegalArgument(fmt.Sprintf("aggregate %s: nil middleware", d.named)))
				return
			}
		}
		d.middleware = append(d.middleware, mw...)
	}
}

// chain wraps core in mw, the first one outermost.
func chain(named factum.NamedAggregate, core CommandFunc, mw ...[]Middleware) CommandFunc {
	f := core
	for i := len(mw) - 1; i >= 0; i-- {
		for j := len(mw[i]) - 1; j >= 0; j-- {
			f = mw[i][j](named, f)
		}
	}
	return f
}

// Recover returns the middleware that turns a panic under it (in a
// sourcing function, say: user code run while loading or after the append)
// into an InternalServerError signal for that command only. The state the
// panic left is not cached: the executor checks a state out of its cache
// for the time of a command and puts it back only when the command ends
// normally. A handler's own panic never reaches it: Decide recovers it into
// the command's rejection.
func Recover() Middleware {
	return func(named factum.NamedAggregate, next CommandFunc) CommandFunc {
		return func(ctx context.Context, cmd *factum.Command) (sig factum.Signal) {
			defer func() {
				if r := recover(); r != nil {
					e := factum.Errorf(factum.CodeInternalServerError, "processing %s panicked: %v", cmd.Name, r)
					e.Err = fmt.Errorf("panic: %v\n%s", r, debug.Stack())
					sig = processed(named, cmd)
					fail(&sig, e)
					sig.SignalTime = time.Now()
				}
			}()
			return next(ctx, cmd)
		}
	}
}

// RetryConfig configures Retry. Zero fields take the defaults.
type RetryConfig struct {
	// Retries is how often a command is tried again after a recoverable
	// failure; 0 means DefaultRetries, negative means none.
	Retries int
	// Backoff is the first retry's delay, doubled for each further one and
	// jittered (between half and all of it is waited); 0 means
	// DefaultBackoff.
	Backoff time.Duration
	// Transient tells which store errors are worth a retry; nil means
	// IsTransient.
	Transient func(error) bool
}

// Retry returns the middleware that runs a command again after a
// recoverable failure: an EventVersionConflict, or a transient store error
// (see IsTransient). The executor under it reports which failures those
// are, as the signal does not tell a transient store error from a
// permanent one; each retry reloads the aggregate, as the failed attempt
// left no state in the cache. The executor reports no conflict of a
// command with an expected version (it fails with
// CommandExpectVersionConflict) and no append of one whose outcome is
// unknown, only its failed loads; nor does it report a failure after which
// the effects the handler bound could not be undone. When the context ends
// during a wait, the signal carries both the failure and the context's
// error.
func Retry(cfg RetryConfig) Middleware {
	pol := cfg.policy()
	return func(_ factum.NamedAggregate, next CommandFunc) CommandFunc {
		if pol.retries < 0 {
			return next
		}
		return func(ctx context.Context, cmd *factum.Command) factum.Signal {
			r := &retrying{Context: ctx}
			return pol.run(ctx, func() (factum.Signal, report) {
				r.rep = report{}
				sig := next(r, cmd)
				return sig, r.rep
			})
		}
	}
}

// retryPolicy is a RetryConfig with its defaults filled in.
type retryPolicy struct {
	retries   int
	backoff   time.Duration
	transient func(error) bool
}

func (cfg RetryConfig) policy() retryPolicy {
	pol := retryPolicy{retries: cfg.Retries, backoff: cfg.Backoff, transient: cfg.Transient}
	if pol.retries == 0 {
		pol.retries = DefaultRetries
	}
	if pol.backoff <= 0 {
		pol.backoff = DefaultBackoff
	}
	if pol.transient == nil {
		pol.transient = IsTransient
	}
	return pol
}

// report is what one attempt tells the retry loop: a failure a retry may
// cure, which the signal alone does not tell (a transient store error and
// a permanent one both end as InternalServerError).
type report struct {
	// conflict: another writer moved the aggregate; a reload resolves it.
	conflict bool
	// err: the attempt's failure, set when nothing stands in the way of a
	// retry; one is made after a conflict or a transient error.
	err error
}

// run calls attempt until it succeeds, fails for good, or the retries are
// spent. The executor's default Retry runs it around the processing
// itself, which spares it the context the middleware form needs. Each
// retry is told to the RetryObserver in ctx, if any.
func (pol retryPolicy) run(ctx context.Context, attempt func() (factum.Signal, report)) factum.Signal {
	for n := 0; ; n++ {
		sig, rep := attempt()
		again := rep.conflict || rep.err != nil && (errors.Is(rep.err, factum.ErrEventVersionConflict) || pol.transient(rep.err))
		if !again || n >= pol.retries || ctx.Err() != nil {
			if again {
				// A Retry outside this one may try again.
				reportRetry(ctx, rep)
			}
			return sig
		}
		t := time.NewTimer(retryDelay(pol.backoff, n))
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			failed := processedLike(sig)
			fail(&failed, errors.Join(rep.err, ctx.Err()))
			failed.SignalTime = time.Now()
			return failed
		}
		observeRetry(ctx, n+2)
	}
}

type retryKey struct{}

// retrying is the context of one command under a Retry middleware: the
// executor (or an inner Retry) under it reports through it.
type retrying struct {
	context.Context
	rep report
}

// Value returns the retrying itself for retryKey, and the parent's values
// for every other key.
func (r *retrying) Value(key any) any {
	if key == (retryKey{}) {
		return r
	}
	return r.Context.Value(key)
}

// reportRetry tells the Retry middleware running the command, if any, of
// a failure a retry may cure.
func reportRetry(ctx context.Context, rep report) {
	if !rep.conflict && rep.err == nil {
		return
	}
	if r, _ := ctx.Value(retryKey{}).(*retrying); r != nil {
		r.rep = rep
	}
}

// processed returns the PROCESSED signal of cmd, without an outcome yet.
func processed(named factum.NamedAggregate, cmd *factum.Command) factum.Signal {
	return factum.Signal{
		CommandID:   cmd.ID,
		RequestID:   cmd.RequestIDOrID(),
		Stage:       factum.StageProcessed,
		Function:    factum.Function{Context: named.Context, Processor: named.Aggregate, Name: cmd.Name},
		AggregateID: cmd.AggregateID,
	}
}

// processedLike returns sig's identities without its outcome.
func processedLike(sig factum.Signal) factum.Signal {
	return factum.Signal{
		CommandID:   sig.CommandID,
		RequestID:   sig.RequestID,
		Stage:       sig.Stage,
		Function:    sig.Function,
		AggregateID: sig.AggregateID,
	}
}
