package snapshotter

import (
	"context"
	"fmt"
	goruntime "runtime"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/aggregate"
	"github.com/factum-go/factum/component"
	"github.com/factum-go/factum/event"
	"github.com/factum-go/factum/snapshot"
)

// ComponentConfig configures NewComponent. Zero fields take the defaults.
type ComponentConfig struct {
	// Store receives the snapshots (default: the engine's snapshot store).
	Store snapshot.Store
	// Strategy decides which versions are saved (default snapshot.All()).
	Strategy snapshot.Strategy
	// CacheSize bounds the snapshots and states kept per aggregate type
	// (default aggregate.DefaultCacheSize; negative keeps none).
	CacheSize int
	// Saves says how snapshots are saved (default SaveAuto; see
	// Component).
	Saves SaveMode
}

// SaveMode says how the snapshotter saves.
type SaveMode int

const (
	// SaveAuto saves per batch when the store has a batch fast path
	// (BatchSaver or CheckpointBatchSaver: the SQL stores), where one
	// transaction for many snapshots is cheaper than one each, and per
	// stream otherwise. The in-memory store saves per stream: its save
	// costs a lock, and a stream's SNAPSHOT signal then goes out as soon
	// as its snapshot is saved, so that its caller's next command overlaps
	// the rest of the batch instead of waiting for the batch's save.
	SaveAuto SaveMode = iota
	// SavePerStream saves each stream's snapshot as the stream is handled.
	SavePerStream
	// SavePerBatch saves each consumer batch's snapshots at once, with any
	// store (one by one without a fast path).
	SavePerBatch
)

// Component is the snapshotter as an engine component: the engine uses
// one by default whenever it has a snapshot store, and engine.Config's
// Snapshotter replaces it.
//
// At Setup it makes one SNAPSHOT processor per bounded context of the
// engine's types (Processor, a function per aggregate type) and brings the
// state observer the executor reports to under the All strategy; at Attach
// it takes the executor's state cache, which Regenerate clears. Its
// consumers handle streams of different aggregates on up to
// min(4, GOMAXPROCS) lanes unless the engine's event settings say
// otherwise (its saves are version-guarded, so a stream given again is
// harmless). Run has nothing to do.
//
// # Batches
//
// Saving per batch (see SaveMode), a consumer batch is saved at once: each stream is
// folded onto the state the batch reached for its aggregate, only the last
// state per aggregate is saved, and the batch's snapshots are saved
// together (BatchSaver), with the consumer's checkpoint in the same
// transaction where the store can (CheckpointBatchSaver), before the
// checkpoint otherwise. Every stream's SNAPSHOT signal is sent once the
// save that covers it has committed. The batch is saved when the consumer
// saves its checkpoint or reads the log again, whichever comes first, so
// the checkpoint never passes an unsaved stream and a crash loses nothing
// (the streams after the checkpoint are folded and saved again). A
// snapshot the store refuses for good (a value the database cannot hold,
// another tenant's aggregate) fails its streams' signals and is recorded
// with the engine's failure recorder; a save that fails otherwise holds
// the consumer until it succeeds.
type Component struct {
	cfg ComponentConfig
	sn  *Snapshotter
}

var _ component.Component[component.Host] = (*Component)(nil)

// NewComponent returns the component of cfg; cfg is validated at
// engine.New.
func NewComponent(cfg ComponentConfig) *Component { return &Component{cfg: cfg} }

// Snapshotter returns the snapshotter the component made at Setup, nil
// before.
func (c *Component) Snapshotter() *Snapshotter { return c.sn }

// Setup makes the snapshotter over the engine's stores and its processors
// over env.Types.
func (c *Component) Setup(env component.Env) (component.Parts, error) {
	if c.sn != nil {
		return component.Parts{}, factum.IllegalState("snapshotter: the component is set up already (make one per engine)")
	}
	if c.cfg.Saves < SaveAuto || c.cfg.Saves > SavePerBatch {
		return component.Parts{}, factum.IllegalArgument(fmt.Sprintf("snapshotter: unknown save mode %d", c.cfg.Saves))
	}
	store := c.cfg.Store
	if store == nil {
		store = env.Snapshots
	}
	if store == nil {
		return component.Parts{}, factum.IllegalArgument("snapshotter: the engine has no snapshot store and the component none of its own")
	}
	sn, err := New(Config{Store: store, Strategy: c.cfg.Strategy, Events: env.Store, Codec: env.Codec, CacheSize: c.cfg.CacheSize})
	if err != nil {
		return component.Parts{}, err
	}
	procs, err := sn.processors(env.Types)
	if err != nil {
		return component.Parts{}, err
	}
	c.sn = sn
	parts := component.Parts{Processors: procs, Consumer: c.consumer}
	if st := sn.States(); st != nil {
		parts.States = st
	}
	return parts, nil
}

// Attach gives the snapshotter the executor's state cache, when it has
// one.
func (c *Component) Attach(h component.Host) error {
	if c.sn == nil {
		return factum.IllegalState("snapshotter: Attach before Setup")
	}
	if f, ok := h.Executor().(aggregate.Forgetter); ok {
		c.sn.UseForgetter(f)
	}
	return nil
}

// Run returns nil at once: the snapshotter's work runs in its consumers,
// which the engine runs and drains.
func (c *Component) Run(context.Context) error { return nil }

// Regenerate is Snapshotter.Regenerate, behind Engine.RegenerateSnapshot.
func (c *Component) Regenerate(ctx context.Context, typ aggregate.Type, id factum.AggregateID) (snapshot.Snapshot, error) {
	if c.sn == nil {
		return snapshot.Snapshot{}, factum.IllegalState("snapshotter: Regenerate before Setup")
	}
	return c.sn.Regenerate(ctx, typ, id)
}

// consumer sets up the consumer of one of the processors: its lanes and,
// when it saves per batch, the batch its streams are saved in.
func (c *Component) consumer(_ *event.Processor, cfg event.Config) event.Config {
	if cfg.Concurrency == 0 {
		// One goroutine per context would otherwise be the one serial
		// step between every command and its SNAPSHOT.
		cfg.Concurrency = min(4, goruntime.GOMAXPROCS(0))
	}
	switch c.cfg.Saves {
	case SavePerStream:
		return cfg
	case SaveAuto:
		_, batch := c.sn.store.(BatchSaver)
		_, cbatch := c.sn.store.(CheckpointBatchSaver)
		if !batch && !cbatch {
			return cfg
		}
	}
	return c.sn.batched(cfg)
}
