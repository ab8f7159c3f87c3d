package projection

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/engine"
	"github.com/factum-go/factum/event"
)

// ComponentConfig configures a Component. Store and Projections are
// required; zero fields take the defaults.
type ComponentConfig struct {
	// Store is the read model's database, holding the checkpoints.
	Store Store
	// Projections are the projections the component runs, one runner
	// each; two with the same group are refused.
	Projections []*Projection
	// Runner tunes every runner (BatchSize, Attempts, Backoff,
	// PollInterval, Logger, Now). Its Log, Store, Failures and Notify must
	// be unset: they are the engine's event store, Store, the engine's
	// failure recorder and the engine's signal sink.
	Runner Config
	// DrainTimeout bounds how long Run, once its ctx ends, keeps
	// projecting the log to its end before it cancels the runners and
	// rolls back the batches in hand (default 5 s).
	DrainTimeout time.Duration
}

// Component runs projections as an engine component: one entry of
// engine.Config's Components does what NewRunner and a goroutine per
// runner do by hand, and makes PROJECTED waits expect the projections.
//
//	comp := projection.NewComponent(projection.ComponentConfig{Store: store, Projections: []*projection.Projection{items}})
//	eng, _ := engine.New(engine.Config{Storage: db, Components: []engine.Component{comp}}, types...)
//
// At engine.New it validates its config and answers, for the gateway,
// which projections consume which events, so a SendAndWait for
// PROJECTED returns only once every projection consuming the command's
// events committed its transaction (its signal goes to the engine's
// sink after the commit), and at once when none consumes them. A stream
// a projection keeps failing on is recorded by the engine's failure
// recorder (Config.Failures or compensation's); without one the runner
// retries it and never moves past it. From Start the runners run; at
// Shutdown they project the log to its end (at most DrainTimeout) and
// stop.
type Component struct {
	cfg     ComponentConfig
	runners []*Runner
}

var _ engine.Component = (*Component)(nil)

// NewComponent returns the component of cfg; cfg is validated at
// engine.New.
func NewComponent(cfg ComponentConfig) *Component {
	cfg.Projections = append([]*Projection(nil), cfg.Projections...)
	return &Component{cfg: cfg}
}

// Runner returns the runner of the projection with the given group (for
// Rebuild), once engine.New attached the component.
func (c *Component) Runner(group factum.Function) (*Runner, bool) {
	for _, r := range c.runners {
		if r.p.group == group {
			return r, true
		}
	}
	return nil, false
}

// Setup validates the config and brings the projections' consumers.
func (c *Component) Setup(env engine.Env) (engine.Parts, error) {
	cfg := c.cfg
	if cfg.Store == nil {
		return engine.Parts{}, factum.IllegalArgument("projection: the component has no Store")
	}
	if len(cfg.Projections) == 0 {
		return engine.Parts{}, factum.IllegalArgument("projection: the component has no projections")
	}
	if cfg.Runner.Log != nil || cfg.Runner.Store != nil || cfg.Runner.Failures != nil || cfg.Runner.Notify != nil {
		return engine.Parts{}, factum.IllegalArgument("projection: the component's Runner sets Log, Store, Failures or Notify, which are the engine's")
	}
	if cfg.DrainTimeout < 0 {
		return engine.Parts{}, factum.IllegalArgument("projection: the component's DrainTimeout is negative")
	}
	seen := map[factum.Function]bool{}
	for i, p := range cfg.Projections {
		if p == nil {
			return engine.Parts{}, factum.IllegalArgument(fmt.Sprintf("projection: the component's Projections[%d] is nil", i))
		}
		if seen[p.group] {
			return engine.Parts{}, factum.IllegalArgument(fmt.Sprintf("projection %s is in the component twice", p.group))
		}
		seen[p.group] = true
	}
	if _, ok := env.Store.(event.LogReader); !ok {
		return engine.Parts{}, factum.IllegalArgument("projection: the engine's event store has no global log")
	}
	return engine.Parts{Consumers: consumers(cfg.Projections)}, nil
}

// Attach makes the runners, which read the engine's log, record failures
// with the engine's recorder and signal into its sink.
func (c *Component) Attach(e *engine.Engine) error {
	if c.runners != nil {
		return factum.IllegalState("projection: the component is attached to an engine already (make one per engine)")
	}
	log, ok := e.Store().(event.LogReader)
	if !ok {
		return factum.IllegalArgument("projection: the engine's event store has no global log")
	}
	sink := e.Signals()
	runners := make([]*Runner, 0, len(c.cfg.Projections))
	for _, p := range c.cfg.Projections {
		rc := c.cfg.Runner
		rc.Log, rc.Store, rc.Failures, rc.Notify = log, c.cfg.Store, e.Failures(), sink.Signal
		r, err := NewRunner(p, rc)
		if err != nil {
			return err
		}
		runners = append(runners, r)
	}
	c.runners = runners
	return nil
}

// Run runs every runner until ctx ends; then it lets them project the
// log to its end, for at most DrainTimeout, cancels them and returns once
// they all returned.
func (c *Component) Run(ctx context.Context) error {
	if c.runners == nil {
		return factum.IllegalState("projection: Run before Attach")
	}
	rctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	defer cancel()
	var wg sync.WaitGroup
	errs := make([]error, len(c.runners))
	for i, r := range c.runners {
		wg.Go(func() { errs[i] = r.Run(rctx) })
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
		return errors.Join(errs...)
	case <-ctx.Done():
	}
	for _, r := range c.runners {
		r.Drain()
	}
	d := c.cfg.DrainTimeout
	if d == 0 {
		d = 5 * time.Second
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-done:
	case <-t.C:
		cancel()
		<-done
	}
	return errors.Join(errs...)
}

// consumers answers which projections consume which events.
type consumers []*Projection

// FunctionsFor names the projections consuming one of the events, for
// the PROJECTED stage only.
func (ps consumers) FunctionsFor(stage factum.CommandStage, named factum.NamedAggregate, eventNames []string) []factum.Function {
	if stage != factum.StageProjected {
		return nil
	}
	var out []factum.Function
	for _, p := range ps {
		for _, n := range eventNames {
			if p.Consumes(named, n) {
				out = append(out, p.Function())
				break
			}
		}
	}
	return out
}

// Projections returns the component's projections.
func (c *Component) Projections() []*Projection { return slices.Clone(c.cfg.Projections) }

// byName returns the runner of the projection context/name.
func (c *Component) byName(context, name string) (*Runner, error) {
	if c.runners == nil {
		return nil, factum.IllegalState("projection: the component is not attached to an engine")
	}
	for _, r := range c.runners {
		if r.p.group.Context == context && r.p.group.Processor == name {
			return r, nil
		}
	}
	return nil, factum.NotFound(fmt.Sprintf("no projection %s/%s", context, name))
}

// List returns every projection's status, in the order of Projections.
func (c *Component) List(ctx context.Context) ([]Status, error) {
	if c.runners == nil {
		return nil, factum.IllegalState("projection: the component is not attached to an engine")
	}
	out := make([]Status, 0, len(c.runners))
	for _, r := range c.runners {
		s, err := r.Status(ctx)
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, nil
}

// Status returns the status of the projection context/name (NotFound if
// the component has none such).
func (c *Component) Status(ctx context.Context, context, name string) (Status, error) {
	r, err := c.byName(context, name)
	if err != nil {
		return Status{}, err
	}
	return r.Status(ctx)
}

// Rebuild starts a blue/green rebuild of the projection context/name
// (Runner.Rebuild).
func (c *Component) Rebuild(ctx context.Context, context, name string) error {
	r, err := c.byName(context, name)
	if err != nil {
		return err
	}
	return r.Rebuild(ctx)
}

// ResetAndReplay empties the projection context/name and replays the log
// into it (Runner.ResetAndReplay).
func (c *Component) ResetAndReplay(ctx context.Context, context, name string) error {
	r, err := c.byName(context, name)
	if err != nil {
		return err
	}
	return r.ResetAndReplay(ctx)
}

// Query runs the read query of the projection context/name in tenant
// (Runner.Query).
func (c *Component) Query(ctx context.Context, tenant, context, name, query string, raw map[string]string) (Result, error) {
	r, err := c.byName(context, name)
	if err != nil {
		return Result{}, err
	}
	return r.Query(ctx, tenant, query, raw)
}

// Redeliver re-runs a stream whose recorded failure belongs to one of the
// component's projections (fn is its Function) through it
// (Runner.Retry), under timeout; it reports false for a function that is
// none of them. Compensation's retries call it.
func (c *Component) Redeliver(ctx context.Context, fn factum.Function, s *factum.EventStream, timeout time.Duration) (bool, error) {
	for _, r := range c.runners {
		if r.p.Function() == fn {
			if timeout > 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, timeout)
				defer cancel()
			}
			return true, r.Retry(ctx, s)
		}
	}
	return false, nil
}

// Owns reports whether fn is the Function of one of the component's
// projections (compensation asks it before Redeliver).
func (c *Component) Owns(fn factum.Function) bool {
	return slices.ContainsFunc(c.cfg.Projections, func(p *Projection) bool { return p != nil && p.Function() == fn })
}
