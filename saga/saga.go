package saga

import (
	"context"
	"errors"
	"fmt"
	"maps"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/codec"
	"github.com/factum-go/factum/command"
	"github.com/factum-go/factum/event"
)

// Sender sends a command and waits for a stage of it; *command.Gateway
// implements it. A saga waits for PROCESSED: it passes a stream only once
// every command it sent for it is decided.
type Sender interface {
	SendAndWait(ctx context.Context, cmd factum.Command, plan command.WaitPlan) (command.Result, error)
}

// ResultCommandIDs is the key of the SAGA_HANDLED result listing the IDs of
// the commands the saga sent for the stream, in order.
const ResultCommandIDs = "commandIds"

// Saga is a named set of saga functions. Its processor needs a Sender, so
// it is built when the runtime is (see Processor).
type Saga struct {
	context, name string
	fns           []func(send Sender) event.Option
	// popts configure the saga's processor (WithSettings, WithMiddleware).
	popts []event.Option
}

// Func is a saga function for events of type E: it returns the commands to
// send, built with factum.NewCommand. Their request IDs, tenants and headers
// are set by the saga (see the package documentation); their order is
// part of their identity, so keep it deterministic.
type Func[E any] func(ctx context.Context, m event.Message, e E) ([]factum.Command, error)

// Option adds a function to a saga.
type Option func(*Saga)

// New returns the saga context/name with its functions.
func New(context, name string, opts ...Option) *Saga {
	s := &Saga{context: context, name: name}
	for _, o := range opts {
		o(s)
	}
	return s
}

// On adds a function for events of type E (see event.On for naming and
// decoding; event.HandlerOption values such as event.From apply).
func On[E any](fn Func[E], opts ...event.HandlerOption) Option {
	return func(s *Saga) {
		s.fns = append(s.fns, func(send Sender) event.Option {
			return event.On(func(ctx context.Context, m event.Message, e E) error {
				cmds, err := fn(ctx, m, e)
				if err != nil {
					return err
				}
				ids, err := SendAll(ctx, send, m, cmds)
				if len(ids) > 0 {
					event.AddResult(ctx, ResultCommandIDs, ids)
				}
				return err
			}, opts...)
		})
	}
}

// WithSettings gives the saga its own consumer settings, over the
// engine's (see event.Settings).
func WithSettings(st event.Settings) Option {
	return func(s *Saga) { s.popts = append(s.popts, event.WithSettings(st)) }
}

// WithMiddleware wraps every function of the saga, inside the engine's
// event middleware (see event.Middleware); the first is the outermost.
func WithMiddleware(mw ...event.Middleware) Option {
	return func(s *Saga) { s.popts = append(s.popts, event.WithMiddleware(mw...)) }
}

// Name returns the saga's identity as a Function with an empty Name.
func (s *Saga) Name() factum.Function {
	return factum.Function{Context: s.context, Processor: s.name}
}

// Processor returns the saga as an event processor signalling SAGA_HANDLED,
// sending its commands through send and decoding events with reg.
func (s *Saga) Processor(reg *codec.Registry, send Sender) (*event.Processor, error) {
	if send == nil {
		return nil, factum.IllegalArgument(fmt.Sprintf("saga %s/%s needs a sender", s.context, s.name))
	}
	opts := make([]event.Option, 0, len(s.popts)+len(s.fns))
	opts = append(opts, s.popts...)
	for _, f := range s.fns {
		opts = append(opts, f(send))
	}
	p, err := event.NewProcessor(s.context, s.name, factum.StageSagaHandled, opts...)
	if err != nil {
		return nil, err
	}
	return p.Bind(reg)
}

// Prepare completes the commands a saga function returned for m: request
// IDs derived from the event ID and index, the source tenant where the
// command names none (or the default), and the stream's header under the
// command's own.
func Prepare(m event.Message, cmds []factum.Command) []factum.Command {
	out := make([]factum.Command, len(cmds))
	for i, c := range cmds {
		c.RequestID = factum.DeriveID("saga", m.Event.ID, fmt.Sprint(i))
		if c.ID == "" {
			c.ID = factum.NewID()
		}
		if c.AggregateID.Tenant == "" || c.AggregateID.Tenant == factum.DefaultTenant {
			c.AggregateID.Tenant = m.Stream.AggregateID.Tenant
		}
		if len(m.Stream.Header) > 0 {
			h := maps.Clone(m.Stream.Header)
			maps.Copy(h, c.Header)
			c.Header = h
		}
		out[i] = c
	}
	return out
}

// SendAll prepares the commands and sends them in order, each one waiting
// until it is decided (PROCESSED) before the next is sent, and returns the
// IDs of those decided. A command is decided when its stream was appended,
// when it repeats a request whose stream was appended (the gateway answers
// with the first attempt's outcome), or when it was refused. A void
// (fire-and-forget) command is decided when the bus accepted it: that is
// all it promises.
//
// The first command not appended stops the sending: a refusal (a
// non-retryable failure at SENT or PROCESSED, such as a deleted target) is
// returned as a *RefusedError with the refusal's code, and a command whose
// outcome is unknown or retryable (a timeout, back-pressure, a lost store
// connection) as a *PendingError. Either way the saga function fails, so
// its consumer records the failure for compensation (or, failing that,
// delivers the stream again) instead of moving past a step that never
// happened. Re-sending after a crash or a retry is safe: the earlier
// commands repeat their derived request IDs, which the targets recognise.
func SendAll(ctx context.Context, send Sender, m event.Message, cmds []factum.Command) ([]string, error) {
	prepared := Prepare(m, cmds)
	ids := make([]string, 0, len(prepared))
	for i := range prepared {
		c := &prepared[i]
		res, err := send.SendAndWait(ctx, *c, command.Wait(factum.StageProcessed))
		if errors.Is(err, command.ErrVoid) {
			// A void command promises no more than its acceptance.
			res, err = send.SendAndWait(ctx, *c, command.Wait(factum.StageSent))
		}
		if err != nil {
			if res.Stage == 0 {
				res = command.Result{Stage: factum.StageSent, CommandID: c.ID, RequestID: c.RequestID, AggregateID: c.AggregateID, Code: factum.CodeOf(err), Message: factum.MessageOf(err)}
			}
			if factum.IsRetryable(err) || res.Code == factum.CodeInternalServerError {
				return ids, &PendingError{Command: c.Name, Result: res, Err: err}
			}
			return ids, &RefusedError{Command: c.Name, Result: res, Err: err}
		}
		if !res.Succeeded() {
			return ids, &PendingError{Command: c.Name, Result: res, Err: res.Err()}
		}
		ids = append(ids, res.CommandID)
	}
	return ids, nil
}
