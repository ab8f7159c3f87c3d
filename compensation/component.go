package compensation

import (
	"context"
	"sync/atomic"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/aggregate"
	"github.com/factum-go/factum/engine"
	"github.com/factum-go/factum/snapshot"
)

// Component is compensation as an engine component: one entry of
// engine.Config's Components does what New, Type, Bind and a scheduler
// goroutine do by hand.
//
//	comp := compensation.NewComponent(compensation.Config{}, compensation.SchedulerConfig{})
//	eng, _ := engine.New(engine.Config{Storage: db, Components: []engine.Component{comp}}, types...)
//	h, _ := httpapi.New(httpapi.Config{Engine: eng, Compensation: comp.Service()})
//
// At engine.New it takes the engine's bounded context and snapshot store
// where Config leaves them unset (the snapshot store must answer queries),
// brings the execution aggregate type and the failure recorder, and binds
// to the engine; from Start the scheduler runs, until Shutdown stops it
// before the engine drains.
type Component struct {
	cfg   Config
	sched SchedulerConfig
	comp  atomic.Pointer[Compensation]
}

var _ engine.Component = (*Component)(nil)

// NewComponent returns the component of cfg, whose scheduler runs with
// sched (zero fields take the defaults). Config is validated at
// engine.New.
func NewComponent(cfg Config, sched SchedulerConfig) *Component {
	return &Component{cfg: cfg, sched: sched}
}

// Compensation returns the compensation the component made at
// engine.New, or nil before.
func (m *Component) Compensation() *Compensation { return m.comp.Load() }

// Service returns the operator service (for httpapi.Config's
// Compensation), or nil before engine.New.
func (m *Component) Service() *Service {
	c := m.comp.Load()
	if c == nil {
		return nil
	}
	return c.Service()
}

// Setup makes the compensation, with the engine's bounded context and
// snapshot store where Config leaves them unset.
func (m *Component) Setup(env engine.Env) (engine.Parts, error) {
	cfg := m.cfg
	if cfg.Context == "" {
		cfg.Context = env.Context
	}
	if cfg.Snapshots == nil {
		qs, ok := env.Snapshots.(snapshot.QueryStore)
		if !ok {
			return engine.Parts{}, factum.IllegalArgument("compensation: the engine has no snapshot store that answers queries (set engine.Config's Storage or SnapshotStore, or Config.Snapshots)")
		}
		cfg.Snapshots = qs
	}
	c, err := New(cfg)
	if err != nil {
		return engine.Parts{}, err
	}
	m.comp.Store(c)
	return engine.Parts{Types: []aggregate.Type{c.Type()}, Failures: c}, nil
}

// Attach binds the compensation to the engine.
func (m *Component) Attach(e *engine.Engine) error {
	c := m.comp.Load()
	if c == nil {
		return factum.IllegalState("compensation: Attach before Setup")
	}
	return c.Bind(e)
}

// Run runs the scheduler until ctx ends, then returns after the pass in
// hand.
func (m *Component) Run(ctx context.Context) error {
	c := m.comp.Load()
	if c == nil {
		return factum.IllegalState("compensation: Run before Setup")
	}
	return c.NewScheduler(m.sched).Run(ctx)
}
