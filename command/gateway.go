package command

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/aggregate"
	"github.com/factum-go/factum/eventstore"
)

// ErrVoid is the cause of the IllegalArgument error for a wait beyond SENT
// on a void (fire-and-forget) command.
var ErrVoid = errors.New("the command is void")

// DefaultMaxTimeout caps wait timeouts when GatewayConfig.MaxTimeout is 0.
const DefaultMaxTimeout = 10 * time.Minute

// GatewayConfig configures a Gateway.
type GatewayConfig struct {
	// Registry holds the aggregate types commands may target; required.
	Registry *aggregate.Registry
	// Bus carries commands to the processors; required.
	Bus Bus
	// Waiters routes wait signals back to waiting calls; required. The
	// processors' sink must deliver into it.
	Waiters *Waiters
	// Store answers Lookup; required.
	Store eventstore.Store
	// Checker is the request-ID pre-check; nil disables it (the store's
	// append still refuses duplicates and the outcome is still returned).
	Checker *RequestChecker
	// Consumers tells which functions consume which events; nil means none,
	// so branch-stage waits complete right after PROCESSED.
	Consumers Consumers
	// Progress lets a repeated request wait for a branch stage on its
	// first attempt's stream; nil answers it at PROCESSED, with a note.
	Progress Progress
	// DefaultTimeout applies to plans without one; 0 means DefaultTimeout.
	DefaultTimeout time.Duration
	// MaxTimeout refuses plans with a longer timeout; 0 means
	// DefaultMaxTimeout.
	MaxTimeout time.Duration
	// IDKey, if set, keys the aggregate IDs of creates sent without one
	// (Gateway.CreateID): a deployment secret of at least MinIDKeyLen
	// bytes, the same on every instance of the service. With it, nobody
	// without the key can compute the ID a create will get, so no tenant
	// can take or probe another tenant's from its request ID; a retry
	// still gets its first attempt's ID on any instance with the key.
	// Changing the key changes the ID a retry made across the change
	// gets. Nil keeps the unkeyed CreateID, the IDs existing stores hold.
	IDKey []byte
}

// Gateway is where commands enter: it completes and validates them,
// answers repeated requests from the event store, sends them on the bus and
// waits for the stage the caller asks for. It is safe for concurrent use.
type Gateway struct {
	reg        *aggregate.Registry
	bus        Bus
	waiters    *Waiters
	store      eventstore.Store
	checker    *RequestChecker
	consumers  Consumers
	progress   Progress
	defTimeout time.Duration
	maxTimeout time.Duration
	idKey      *idKey       // nil: unkeyed CreateID
	closed     atomic.Bool  // see Close
	admitted   atomic.Int64 // commands admitted and not yet handed to the bus
}

// NewGateway returns a gateway.
func NewGateway(cfg GatewayConfig) (*Gateway, error) {
	if cfg.Registry == nil || cfg.Bus == nil || cfg.Waiters == nil || cfg.Store == nil {
		return nil, factum.IllegalArgument("gateway: Registry, Bus, Waiters and Store are required")
	}
	g := &Gateway{
		reg: cfg.Registry, bus: cfg.Bus, waiters: cfg.Waiters, store: cfg.Store,
		checker: cfg.Checker, consumers: cfg.Consumers, progress: cfg.Progress,
		defTimeout: cfg.DefaultTimeout, maxTimeout: cfg.MaxTimeout,
	}
	if g.defTimeout <= 0 {
		g.defTimeout = DefaultTimeout
	}
	if g.maxTimeout <= 0 {
		g.maxTimeout = DefaultMaxTimeout
	}
	if g.defTimeout > g.maxTimeout {
		return nil, factum.IllegalArgument(fmt.Sprintf("gateway: default timeout %v exceeds the maximum %v", g.defTimeout, g.maxTimeout))
	}
	if cfg.IDKey != nil {
		k, err := newIDKey(cfg.IDKey)
		if err != nil {
			return nil, err
		}
		g.idKey = k
	}
	return g, nil
}

// Waiters returns the gateway's signal routing table, the Sink that
// processors and event functions emit into.
func (g *Gateway) Waiters() *Waiters { return g.waiters }

// prepare completes and validates cmd: command ID, request ID (defaults to
// the command ID), the command's markers from its aggregate definition, the
// aggregate ID of a create command sent without one (derived from the
// request ID, so a retried create finds its first attempt: see CreateID),
// the tenant; then the message and its body. It returns the command to send and the
// effective timeout, with the room for the context its bus gets it in.
func (g *Gateway) prepare(cmd *factum.Command, plan WaitPlan) (*sending, time.Duration, error) {
	s := new(sending)
	c := &s.cmd
	*c = *cmd
	if c.ID == "" {
		c.ID = factum.NewID()
	}
	if c.RequestID == "" {
		c.RequestID = c.ID
	}
	if c.Name == "" && c.Body != nil {
		c.Name = factum.NameOf(c.Body)
	}
	timeout, err := plan.check(g.defTimeout, g.maxTimeout)
	if err != nil {
		return s, 0, err
	}
	t, ok := g.reg.Lookup(c.AggregateID.NamedAggregate)
	if !ok {
		return s, 0, factum.NotFound(fmt.Sprintf("no aggregate type %s is registered", c.AggregateID.NamedAggregate))
	}
	spec, ok := t.Command(c.Name)
	if !ok {
		return s, 0, factum.IllegalArgument(fmt.Sprintf("aggregate %s does not handle command %q", c.AggregateID.NamedAggregate, c.Name))
	}
	c.IsCreate = c.IsCreate || spec.Create
	c.AllowCreate = c.AllowCreate || spec.AllowCreate
	c.IsVoid = c.IsVoid || spec.Void
	if c.AggregateID.Tenant == "" {
		c.AggregateID.Tenant = factum.DefaultTenant
	}
	if c.AggregateID.ID == "" && c.IsCreate && c.RequestID != "" {
		c.AggregateID.ID = g.CreateID(c.AggregateID.NamedAggregate, c.AggregateID.Tenant, c.RequestID)
	}
	if c.CreateTime.IsZero() {
		c.CreateTime = time.Now()
	}
	if err := c.Validate(); err != nil {
		return s, 0, err
	}
	if c.IsVoid && plan.Stage != factum.StageSent {
		return s, 0, factum.Errorf(factum.CodeIllegalArgument, "command %s: %w: only SENT can be awaited, not %s", c.Name, ErrVoid, plan.Stage)
	}
	if err := validateBody(c.Body); err != nil {
		return s, 0, err
	}
	return s, timeout, nil
}

// precheck answers a repeated request from the event store. It returns the
// first attempt's outcome when the request was already appended.
func (g *Gateway) precheck(ctx context.Context, c *factum.Command) (Result, bool, error) {
	if g.checker == nil {
		return Result{}, false, nil
	}
	s, dup, err := g.checker.Check(ctx, c.AggregateID, c.RequestID)
	if err != nil && ctx.Err() != nil {
		return Result{}, false, ctx.Err() // the caller gave up, not the store
	}
	if err != nil {
		// The check could not reach its authority: refuse rather than let
		// a possible duplicate through unchecked, retryably.
		return Result{}, false, factum.Errorf(factum.CodeTooManyRequests,
			"request-ID pre-check cannot reach the event store; retry the same request later: %w", err).
			With(c.AggregateID, 0, c.ID, c.RequestID)
	}
	if !dup || !sameTenant(c.AggregateID, &s) {
		// Another tenant's stream is no duplicate of this request: the
		// command goes on and is refused as for a missing aggregate.
		return Result{}, false, nil
	}
	return duplicateResult(c, &s), true, nil
}

// sameTenant reports whether s belongs to id's tenant. Every answer built
// from a stored stream checks it first, whatever the store already
// checked: a duplicate or a lookup must never carry another tenant's
// outcome.
func sameTenant(id factum.AggregateID, s *factum.EventStream) bool {
	return s.AggregateID.TenantOrDefault() == id.TenantOrDefault()
}

// appendedResult is the PROCESSED result of the stored stream s, answered
// to command commandID.
func appendedResult(commandID string, s *factum.EventStream) Result {
	names := make([]string, len(s.Events))
	for i := range s.Events {
		names[i] = s.Events[i].Name
	}
	return Result{
		Stage:            factum.StageProcessed,
		CommandID:        commandID,
		RequestID:        s.RequestID,
		AggregateID:      s.AggregateID,
		AggregateVersion: s.Version,
		EventNames:       names,
		Code:             factum.CodeOk,
		SignalTime:       s.CreateTime,
	}
}

// duplicateResult is the answer to c, a repeated request, from s, the
// stream its first attempt appended.
func duplicateResult(c *factum.Command, s *factum.EventStream) Result {
	r := appendedResult(c.ID, s)
	r.Duplicate = true
	r.Results = map[string]any{"originalCommandId": s.CommandID}
	r.Note = "request " + s.RequestID + " was already appended by command " + s.CommandID + "; this is its outcome"
	return r
}

// Send sends cmd and returns at SENT, once the bus accepted it. A repeated
// request that was already appended is not sent: its first attempt's
// PROCESSED outcome is returned, marked Duplicate. Any failure is returned
// both as the Result and as a *ResultError.
func (g *Gateway) Send(ctx context.Context, cmd factum.Command) (Result, error) {
	s, _, err := g.prepare(&cmd, Wait(factum.StageSent))
	c := &s.cmd
	if err == nil {
		err = g.admit(ctx)
	}
	if err != nil {
		return failure(factum.StageSent, c, err)
	}
	defer g.admitted.Add(-1)
	if r, dup, err := g.precheck(ctx, c); err != nil {
		return failure(factum.StageSent, c, err)
	} else if dup {
		return r, nil
	}
	if err := g.bus.Send(s.withWait(ctx, factum.StageSent), c); err != nil {
		return failure(factum.StageSent, c, err)
	}
	return sentResult(c), nil
}

func sentResult(c *factum.Command) Result {
	return Result{
		Stage:       factum.StageSent,
		CommandID:   c.ID,
		RequestID:   c.RequestID,
		AggregateID: c.AggregateID,
		Code:        factum.CodeOk,
		SignalTime:  time.Now(),
	}
}

// SendAndWait sends cmd and waits for the plan's stage. It returns the
// result of that stage, or of the first failure on the way: a failed
// PROCESSED ends every wait at once. A branch stage completes when every
// function that consumes the command's events (per the Consumers, narrowed
// by the plan's function target) has signalled, and at once, with a Note,
// when none consumes them. A repeated request that was already appended
// returns its first outcome, marked Duplicate, at PROCESSED.
//
// When the timeout passes or ctx ends, the wait stops with a RequestTimeout
// ResultError (wrapping ctx's error when ctx ended): the command goes on and
// its outcome is unknown; Lookup finds it. The wait is always removed, on
// every path.
func (g *Gateway) SendAndWait(ctx context.Context, cmd factum.Command, plan WaitPlan) (Result, error) {
	var final Result
	var ferr error
	g.run(ctx, &cmd, plan, nil, func(r Result, err error, _ bool) { final, ferr = r, err })
	return final, ferr
}

// run sends the command and drives the wait; emit (if set) gets every
// signal's result in order, and done gets the final one, with whether emit
// already had it. emit returns false to stop the wait early; done is then
// not called.
func (g *Gateway) run(ctx context.Context, cmd *factum.Command, plan WaitPlan, emit func(Result, error) bool, done func(Result, error, bool)) {
	s, timeout, err := g.prepare(cmd, plan)
	c := &s.cmd
	if err == nil {
		err = g.admit(ctx)
	}
	if err != nil {
		r, ferr := failure(factum.StageSent, c, err)
		done(r, ferr, false)
		return
	}
	admitted := true
	handedOver := func() { // the bus has it, or it will never be sent
		if admitted {
			admitted = false
			g.admitted.Add(-1)
		}
	}
	defer handedOver()
	if r, dup, err := g.precheck(ctx, c); err != nil {
		r, ferr := failure(factum.StageSent, c, err)
		done(r, ferr, false)
		return
	} else if dup {
		handedOver()
		r, err := g.awaitDuplicate(ctx, c, plan, r, timeout)
		done(r, err, false)
		return
	}
	// The bus learns the stage waited for: signals this wait cannot use
	// need not travel to this instance (see WaitUses).
	sendCtx := s.withWait(ctx, plan.Stage)
	if plan.Stage == factum.StageSent {
		err := g.bus.Send(sendCtx, c)
		handedOver()
		if err != nil {
			r, ferr := failure(factum.StageSent, c, err)
			done(r, ferr, false)
			return
		}
		done(sentResult(c), nil, false)
		return
	}
	wt, err := g.waiters.register(c.ID)
	if err != nil {
		r, ferr := failure(factum.StageSent, c, err)
		done(r, ferr, false)
		return
	}
	defer g.waiters.remove(c.ID, wt)
	err = g.bus.Send(sendCtx, c)
	handedOver()
	if err != nil {
		r, ferr := failure(factum.StageSent, c, err)
		done(r, ferr, false)
		return
	}
	stopped := false
	var emitR func(*Result) bool
	if emit != nil {
		if !emit(sentResult(c), nil) {
			return
		}
		emitR = func(r *Result) bool {
			if !emit(*r, r.Err()) {
				stopped = true
			}
			return !stopped
		}
	}
	expired := wt.expiry(timeout)
	tr := tracker{g: g, plan: plan, cmd: c, deadline: time.Now().Add(timeout)}
	var local [2]factum.Signal
	for {
		select {
		case <-wt.notify:
			sigs := wt.drain(local[:0])
			for i := range sigs {
				r, fin, emitted := tr.feed(&sigs[i], emitR)
				if stopped {
					return
				}
				if fin {
					if r.Duplicate && r.Stage == factum.StageProcessed && plan.Stage.IsBranch() && r.Succeeded() {
						// The processor found the request appended: wait
						// for the stage on that first attempt's stream.
						r, err := g.awaitDuplicate(ctx, c, plan, r, time.Until(tr.deadline))
						if emit != nil && !emit(r, err) {
							return
						}
						done(r, err, true)
						return
					}
					if emit != nil && !emitted && !emit(r, r.Err()) {
						return
					}
					done(r, r.Err(), true)
					return
				}
			}
		case <-expired:
			r, err := g.unknown(c, plan, tr.lastResult(), fmt.Sprintf("no %s signal within %v; the command's outcome is unknown (look it up by request ID)", plan.Stage, timeout), nil)
			if emit != nil && !emit(r, err) {
				return
			}
			done(r, err, true)
			return
		case <-ctx.Done():
			r, err := g.unknown(c, plan, tr.lastResult(), "wait ended by the caller's context; the command's outcome is unknown (look it up by request ID)", ctx.Err())
			if emit != nil && !emit(r, err) {
				return
			}
			done(r, err, true)
			return
		}
	}
}

// unknown is the result of a wait that ended before its stage: a
// RequestTimeout, never a failure of the command.
func (g *Gateway) unknown(c *factum.Command, plan WaitPlan, last *Result, msg string, cause error) (Result, error) {
	r := Result{
		Stage:       plan.Stage,
		CommandID:   c.ID,
		RequestID:   c.RequestID,
		AggregateID: c.AggregateID,
		Function:    plan.Function,
		Code:        factum.CodeRequestTimeout,
		Message:     msg,
		SignalTime:  time.Now(),
	}
	if last != nil {
		r.AggregateVersion = last.AggregateVersion
		r.EventNames = last.EventNames
	}
	return r, newResultError(r, cause)
}

// Lookup answers "was this request appended to the aggregate, and as
// what?" from the event store: the PROCESSED result of the stream holding
// it, or a NotFound error. It is the way to settle a wait that timed out.
// An aggregate of another tenant than id's is NotFound, the same error as
// for a request never made: nothing tells the caller it exists.
func (g *Gateway) Lookup(ctx context.Context, id factum.AggregateID, requestID string) (Result, error) {
	if err := id.Validate(); err != nil {
		return Result{}, err
	}
	if err := factum.ValidateID("request id", requestID); err != nil {
		return Result{}, err
	}
	s, err := g.store.Lookup(ctx, id, requestID)
	if err == nil && !sameTenant(id, &s) {
		err = eventstore.NotFoundRequest(id, requestID)
	}
	if err != nil {
		return Result{}, err
	}
	return appendedResult(s.CommandID, &s), nil
}
