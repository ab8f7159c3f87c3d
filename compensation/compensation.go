package compensation

import (
	"fmt"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/aggregate"
	"github.com/factum-go/factum/codec"
	"github.com/factum-go/factum/command"
	"github.com/factum-go/factum/engine"
	"github.com/factum-go/factum/event"
	"github.com/factum-go/factum/eventstore"
	"github.com/factum-go/factum/query"
	"github.com/factum-go/factum/snapshot"
)

// Config configures New.
type Config struct {
	// Context is the bounded context the execution aggregate lives in: the
	// application's own, so that its streams go to the application's
	// event store (a SQL event store serves one context). Required.
	Context string
	// Aggregate names the execution aggregate type (default
	// "execution_failed").
	Aggregate string
	// Snapshots is the runtime's snapshot store (engine.Config's
	// SnapshotStore, with the All strategy): the scheduler and the
	// operator lists query the executions' snapshots there. Required.
	Snapshots snapshot.QueryStore
	// RetrySpec is the retry spec of new executions; zero fields take
	// DefaultRetrySpec's values.
	RetrySpec RetrySpec
	// RetrySpecs overrides RetrySpec per function. A key matches a
	// function exactly; a key with an empty Name matches every function
	// of its processor, and one with an empty Processor and Name every
	// function of its context. The most specific match wins; zero fields
	// take RetrySpec's values.
	RetrySpecs map[factum.Function]RetrySpec
	// Classify decides the recoverability of a function's error (default
	// RecoverabilityOf); an invalid answer counts as unknown.
	Classify func(error) Recoverability
	// Now is the clock (default time.Now). Retries are due, and leases
	// time out, by it: instances sharing a store need clocks in sync to
	// well within the execution timeout.
	Now func() time.Time
	// Logger receives what cannot be returned (default slog.Default()).
	Logger *slog.Logger
	// Attempts, if set, learns of each retry of an execution as it
	// starts and ends (telemetry's span per attempt).
	Attempts AttemptObserver
}

// Compensation is the compensation of one bounded context: the
// execution_failed aggregate type (Type), the failure recorder
// (RecordFailure, an event.FailureRecorder), schedulers (NewScheduler) and
// the operator Service. Run with an engine, it is one component (see
// Component):
//
//	comp := compensation.NewComponent(compensation.Config{}, compensation.SchedulerConfig{})
//	eng, _ := engine.New(engine.Config{Storage: db, Components: []engine.Component{comp}}, types...)
//
// By hand, wire it in this order:
//
//	comp, _ := compensation.New(compensation.Config{Context: "shop", Snapshots: snaps})
//	rt, _ := engine.New(engine.Config{Store: store, SnapshotStore: snaps,
//		Failures: comp, Processors: procs}, append(types, comp.Type())...)
//	_ = comp.Bind(rt) // before rt.Start
//	_ = rt.Start(ctx)
//	go comp.NewScheduler(compensation.SchedulerConfig{}).Run(ctx)
//
// A Compensation is safe for concurrent use once bound.
type Compensation struct {
	named    factum.NamedAggregate
	def      *aggregate.Definition[Execution]
	snaps    snapshot.QueryStore
	queries  *snapshot.QueryService
	spec     RetrySpec
	specs    map[factum.Function]RetrySpec
	classify func(error) Recoverability
	now      func() time.Time
	log      *slog.Logger
	attempts AttemptObserver
	bound    atomic.Pointer[bound]
}

// Runtime is what Bind needs of a runtime; *engine.Engine implements it.
type Runtime interface {
	// Gateway sends the compensation's commands.
	Gateway() *command.Gateway
	// Registry must hold the compensation's aggregate type.
	Registry() *aggregate.Registry
	// Functions finds the event function to re-deliver an event to.
	Functions() *event.Registry
	// Store loads the failed streams and the executions' histories.
	Store() eventstore.Store
	// Codec decodes the executions' events.
	Codec() *codec.Registry
}

// bound is what Bind supplies: the parts that exist only once the runtime
// does.
type bound struct {
	gateway   *command.Gateway
	functions *event.Registry
	store     eventstore.Store
	codec     *codec.Registry
	// components lists the runtime's components, among which retries
	// find Redeliverers; nil when the runtime has none.
	components func() []engine.Component
	// live redelivers through the runtime's consumers, with their
	// middleware (an engine.Engine is one); nil when the runtime is not.
	live Redeliverer
}

// New returns the compensation of cfg.Context. It is an IllegalArgument
// error to leave out Context or Snapshots, or to give an invalid name or
// retry spec.
func New(cfg Config) (*Compensation, error) {
	if cfg.Aggregate == "" {
		cfg.Aggregate = AggregateName
	}
	named := factum.NamedAggregate{Context: cfg.Context, Aggregate: cfg.Aggregate}
	if err := named.Validate(); err != nil {
		return nil, fmt.Errorf("compensation: %w", err)
	}
	if cfg.Snapshots == nil {
		return nil, factum.IllegalArgument("compensation: Config.Snapshots is required (the runtime's snapshot store)")
	}
	c := &Compensation{
		named: named, def: newDefinition(named.Context, named.Aggregate), snaps: cfg.Snapshots,
		spec: cfg.RetrySpec.withDefaults(DefaultRetrySpec()), classify: cfg.Classify, now: cfg.Now, log: cfg.Logger,
		specs: make(map[factum.Function]RetrySpec, len(cfg.RetrySpecs)),
	}
	c.attempts = cfg.Attempts
	if err := c.spec.Validate(); err != nil {
		return nil, fmt.Errorf("compensation: %w", err)
	}
	for fn, s := range cfg.RetrySpecs {
		s = s.withDefaults(c.spec)
		if err := s.Validate(); err != nil {
			return nil, fmt.Errorf("compensation: retry spec of %s: %w", fn, err)
		}
		c.specs[fn] = s
	}
	if c.classify == nil {
		c.classify = RecoverabilityOf
	} else {
		user := c.classify
		c.classify = func(err error) Recoverability {
			// A classifier's mistake must not make records invalid: a
			// refused record would hold its consumer forever.
			if r := user(err); r.Valid() {
				return r
			}
			return RecoverabilityUnknown
		}
	}
	if c.now == nil {
		c.now = time.Now
	}
	if c.log == nil {
		c.log = slog.Default()
	}
	// The scheduler and the services are internal, trusted callers: the
	// planner's list guard must not cut a batch short silently, so its
	// limits stay on and batches are sized within them.
	qs, err := snapshot.NewQueryService(cfg.Snapshots, named, query.Planner{Now: c.now, Location: time.UTC})
	if err != nil {
		return nil, fmt.Errorf("compensation: %w", err)
	}
	c.queries = qs
	return c, nil
}

// Type returns the execution_failed aggregate type, to register with the
// runtime next to the application's own.
func (c *Compensation) Type() *aggregate.Definition[Execution] { return c.def }

// Named returns the execution aggregate's type name.
func (c *Compensation) Named() factum.NamedAggregate { return c.named }

// Bind connects the compensation to the runtime built with its Type and
// recorder; call it after engine.New and before the runtime starts. Until
// then RecordFailure returns an error, so a consumer that fails early
// re-delivers the stream instead of losing the failure. It is an
// IllegalArgument error if the runtime does not serve Type.
func (c *Compensation) Bind(rt Runtime) error {
	if rt == nil {
		return factum.IllegalArgument("compensation: Bind needs a runtime")
	}
	if _, ok := rt.Registry().Lookup(c.named); !ok {
		return factum.IllegalArgument(fmt.Sprintf("compensation: the runtime does not serve %s: pass comp.Type() to engine.New", c.named))
	}
	b := &bound{gateway: rt.Gateway(), functions: rt.Functions(), store: rt.Store(), codec: rt.Codec()}
	if cs, ok := rt.(interface{ Components() []engine.Component }); ok {
		b.components = cs.Components
	}
	if rd, ok := rt.(Redeliverer); ok {
		b.live = rd
	}
	c.bound.Store(b)
	return nil
}

// errNotBound is returned before Bind.
var errNotBound = factum.IllegalState("compensation: not bound to a runtime (call Bind after engine.New, before Start)")

func (c *Compensation) runtime() (*bound, error) {
	b := c.bound.Load()
	if b == nil {
		return nil, errNotBound
	}
	return b, nil
}

// RetrySpecFor returns the retry spec a new execution of fn gets: the most
// specific of Config.RetrySpecs, else Config.RetrySpec.
func (c *Compensation) RetrySpecFor(fn factum.Function) RetrySpec {
	for _, k := range [...]factum.Function{fn, {Context: fn.Context, Processor: fn.Processor}, {Context: fn.Context}} {
		if s, ok := c.specs[k]; ok {
			return s
		}
	}
	return c.spec
}

// idOf returns the execution's aggregate ID in tenant.
func (c *Compensation) idOf(id, tenant string) factum.AggregateID {
	return c.named.WithID(id).WithTenant(tenant)
}
