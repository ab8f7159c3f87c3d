package snapshotter

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/aggregate"
	"github.com/factum-go/factum/codec"
	"github.com/factum-go/factum/event"
	"github.com/factum-go/factum/eventstore"
	"github.com/factum-go/factum/internal/built"
	"github.com/factum-go/factum/snapshot"
)

// Processor is the executor name the snapshotter's functions carry:
// Function{Context, "snapshotter", <aggregate name>}.
const Processor = "snapshotter"

// Config configures New. Store, Events and Codec are required.
type Config struct {
	// Store receives the snapshots.
	Store snapshot.Store
	// Strategy decides which versions are saved (default snapshot.All()).
	Strategy snapshot.Strategy
	// Events is the event store the snapshotter loads missing history
	// from.
	Events eventstore.Store
	// Codec decodes the events it folds.
	Codec *codec.Registry
	// CacheSize bounds the snapshots and states kept per aggregate type
	// (default aggregate.DefaultCacheSize; negative keeps none).
	CacheSize int
}

// Snapshotter advances each aggregate's snapshot from the log: it folds a
// stream into the stored state and saves the result when the strategy says
// so. Whatever it decides, the consumer signals SNAPSHOT afterwards. Under
// the All strategy it saves the state the executor reports (States)
// instead of folding, when the report is there.
type Snapshotter struct {
	store    snapshot.Store
	strategy snapshot.Strategy
	events   eventstore.Store
	codec    *codec.Registry
	now      func() time.Time
	limit    int                 // bounds each type's cache; <= 0 keeps nothing
	hints    *stateHints         // the processor's states; nil for none
	encoded  encodedSaver        // store, when it saves the executor's states unchecked; nil otherwise
	encBatch encodedBatchSaver   // store, when it saves batches of them unchecked; nil otherwise
	next     nextSaver           // store, when it saves them after whatever it holds; nil otherwise
	forget   aggregate.Forgetter // the processor's state cache; nil for none

	// caches holds a cache per aggregate type, made by executors and
	// read-only afterwards.
	caches map[factum.NamedAggregate]*snapCache
}

// New returns the snapshotter of cfg. It is an IllegalArgument error to
// leave out Store, Events or Codec.
func New(cfg Config) (*Snapshotter, error) {
	if cfg.Store == nil || cfg.Events == nil || cfg.Codec == nil {
		return nil, factum.IllegalArgument("snapshotter: Config.Store, Events and Codec are required")
	}
	strategy := cfg.Strategy
	if strategy == nil {
		strategy = snapshot.All()
	}
	limit := cfg.CacheSize
	if limit == 0 {
		limit = aggregate.DefaultCacheSize
	}
	sn := &Snapshotter{store: cfg.Store, strategy: strategy, events: cfg.Events, codec: cfg.Codec, now: time.Now, limit: limit}
	// State reports cost the executor an encode per command; they pay
	// only where every state is saved. Under a sparser strategy most would
	// be dropped unused, and the snapshotter folds instead.
	if strategy == snapshot.All() {
		sn.hints = newStateHints(limit)
		if es, ok := cfg.Store.(encodedSaver); ok && built.Owns(cfg.Store, es) {
			sn.encoded = es
		}
		if es, ok := cfg.Store.(encodedBatchSaver); ok && built.Owns(cfg.Store, es) {
			sn.encBatch = es
		}
		if ns, ok := cfg.Store.(nextSaver); ok && built.Owns(cfg.Store, ns) {
			sn.next = ns
		}
	}
	return sn, nil
}

// encodedSaver is a snapshot store that saves a state the executor
// encoded without checking that it is JSON (snapshot.Front's
// SaveEncoded); the snapshotter uses it for the states the executor
// reports, and only when the store declares the methods itself (see
// built.StateSaver).
type encodedSaver interface {
	built.StateSaver
	SaveEncoded(ctx context.Context, s snapshot.Snapshot, _ built.EncodedState) (bool, error)
}

// encodedBatchSaver is a snapshot store whose batch save takes states
// the executor encoded without checking that they are JSON
// (snapshot.BatchFront's SaveBatchAtEncoded), on the terms of
// encodedSaver.
type encodedBatchSaver interface {
	built.StateSaver
	SaveBatchAtEncoded(ctx context.Context, snaps []snapshot.Snapshot, encoded []bool, checkpoints event.CheckpointStore, group factum.Function, pos factum.Position, _ built.EncodedState) (saved []bool, checkpointed bool, err error)
}

// nextSaver is a snapshot store that saves a state the executor encoded
// as the snapshot following whatever version it holds, taking the stored
// snapshot's first fields (snapshot.Memory's SaveEncodedNext), on the
// terms of encodedSaver. The snapshotter then saves an executor's state
// without the cache's entry of the aggregate (a checkout and a keep, each
// under the type's lock, per stream).
type nextSaver interface {
	built.StateSaver
	SaveEncodedNext(ctx context.Context, s snapshot.Snapshot, _ built.EncodedState) (saved, based bool, err error)
}

// States returns the observer the aggregate executor reports the states
// it reaches to (aggregate.ExecutorConfig's States), or nil when the
// strategy does not save every state. A state reported to it may be saved
// as it is, without the store checking that it is JSON: report only
// states encoding/json made, as the executor's are.
func (sn *Snapshotter) States() aggregate.StateObserver {
	if sn.hints == nil {
		return nil
	}
	return sn.hints
}

// UseForgetter gives the snapshotter the executor's state cache, which a
// repair (Regenerate) clears of the aggregate; call it before the
// consumers run.
func (sn *Snapshotter) UseForgetter(f aggregate.Forgetter) { sn.forget = f }

// Processors returns one SNAPSHOT executor per bounded context, with a
// function per aggregate type of that context. Call it once; its
// consumers' saves are version-guarded, so they may handle streams of
// different aggregates concurrently.
func (sn *Snapshotter) Processors(reg *aggregate.Registry) ([]*event.Processor, error) {
	return sn.processors(reg.Types())
}

// processors is Processors over the types.
func (sn *Snapshotter) processors(types []aggregate.Type) ([]*event.Processor, error) {
	byContext := map[string][]event.Option{}
	var order []string
	sn.caches = map[factum.NamedAggregate]*snapCache{}
	for _, typ := range types {
		named := typ.Named()
		cache := newSnapCache(sn.limit)
		sn.caches[named] = cache
		if _, ok := byContext[named.Context]; !ok {
			order = append(order, named.Context)
		}
		byContext[named.Context] = append(byContext[named.Context], event.OnStream(named.Aggregate,
			func(ctx context.Context, s *factum.EventStream) error { return sn.advance(ctx, typ, cache, s) },
			nil, event.From(named)))
	}
	out := make([]*event.Processor, 0, len(order))
	for _, c := range order {
		p, err := event.NewProcessor(c, Processor, factum.StageSnapshot, byContext[c]...)
		if err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	return out, nil
}

// advance brings the aggregate's snapshot to the stream's version. Inside
// a batch (a batched consumer's function) it starts from the aggregate's
// pending entry, if any, and leaves the result pending for the batch's
// save, in the same entry; elsewhere it saves at once. An entry it checked
// out of the cache goes back only when it is what the store holds (or,
// pending, once the batch saved it); on any other outcome it is dropped
// (its typed state may be half folded), and the next stream starts from
// the store.
func (sn *Snapshotter) advance(ctx context.Context, typ aggregate.Type, cache *snapCache, s *factum.EventStream) (err error) {
	b := batchOf(ctx)
	if b == nil && sn.next != nil {
		if done, err := sn.advanceNext(ctx, s); done {
			return err
		}
	}
	key := pendingKey(s.AggregateID)
	var pe *snapEntry // the aggregate's pending entry
	if b != nil {
		pe = b.take(key)
	}
	prev := pe
	if prev == nil {
		prev = cache.checkout(s.AggregateID)
	}
	kept := false
	defer func() {
		switch {
		case kept:
		case pe != nil:
			// Still the batch's to save; its typed state may be half
			// folded, so the next fold decodes.
			pe.typed = aggregate.Typed{}
			b.put(key, pe)
		default:
			cache.drop(s.AggregateID)
		}
	}()
	if pe != nil && pe.unchecked {
		// Begun at version 1 without a load (below) and continued in the
		// same batch: the streams may be a replay from before the
		// checkpoint, which must not save over what the store holds at
		// their versions (a stored equal version is repaired by the save,
		// as a stream saved alone would be): check the store now.
		loaded, err := sn.store.Load(ctx, s.AggregateID)
		switch {
		case errors.Is(err, factum.ErrNotFound):
		case err != nil:
			return err
		case loaded.Version > pe.snap.Version:
			pe.snap, pe.typed, pe.encoded = loaded, aggregate.Typed{}, false
		}
		pe.unchecked = false
	}
	if prev == nil {
		prev = &snapEntry{}
	}
	// An aggregate's first stream needs no load: nothing can be stored
	// before it but its own snapshot or a later one, from a redelivery;
	// saving again at the equal version repairs it to the same state, and
	// the store's version guard refuses to go back from a later one.
	if prev.snap.Version == 0 && s.Version != 1 {
		loaded, err := sn.store.Load(ctx, s.AggregateID)
		switch {
		case errors.Is(err, factum.ErrNotFound):
		case err != nil:
			return err
		default:
			prev.snap = loaded
		}
	}
	if prev.snap.Version >= s.Version || !sn.strategy.ShouldSave(prev.snap.Version, s.Version) {
		// Already there (a redelivery, or a repair saved it), or skipped
		// until the strategy saves.
		switch {
		case pe != nil:
			b.put(key, pe)
			kept = true
		case prev.snap.Version > 0:
			cache.keep(prev)
			kept = true
		}
		if sn.hints != nil {
			sn.hints.take(s.AggregateID, s.Version) // not to be saved: drop it
		}
		return nil
	}
	var next snapEntry
	encoded := false // next's state is the executor's
	if st, ok := sn.hinted(&prev.snap, s); ok {
		// The executor's state after this stream: nothing to fold.
		next = snapEntry{snap: sn.snapshotOf(&prev.snap, st, s, s)}
		encoded = true
	} else {
		streams := []factum.EventStream{*s}
		if prev.snap.Version != s.Version-1 {
			// The strategy skipped versions, or this is the first
			// snapshot of an old aggregate: fold the missing tail too.
			if streams, err = sn.events.Load(ctx, s.AggregateID, prev.snap.Version+1, s.Version); err != nil {
				return err
			}
			if len(streams) == 0 || streams[len(streams)-1].Version != s.Version {
				return factum.IllegalState(fmt.Sprintf("snapshot of %s: history does not reach version %d", s.AggregateID, s.Version))
			}
		}
		if next, err = sn.build(typ, *prev, streams); err != nil {
			return err
		}
	}
	if b != nil {
		// Refused now, the stream fails alone; in the batch's save it
		// would hold the batch back. A state of the executor's is JSON,
		// which the batch's save need not check either (encBatch); the
		// other fields it checks as Validate does.
		if encoded && sn.encBatch != nil {
			err = next.snap.ValidateFields()
		} else {
			err = next.snap.Validate()
		}
		if err != nil {
			return err
		}
		// The entry becomes the aggregate's pending one: checked out of
		// the cache, it stays there checked out until the batch's save.
		prev.snap, prev.typed = next.snap, next.typed
		prev.cache, prev.stream, prev.encoded = cache, s, encoded
		prev.unchecked = s.Version == 1
		b.put(key, prev)
		kept = true
		return nil
	}
	var stored bool
	if encoded && sn.encoded != nil {
		stored, err = sn.encoded.SaveEncoded(ctx, next.snap, built.EncodedState{})
	} else {
		stored, err = sn.store.Save(ctx, next.snap)
	}
	if err != nil {
		return err
	}
	if stored {
		next.snap.AggregateID.Tenant = next.snap.AggregateID.TenantOrDefault()
		prev.snap, prev.typed = next.snap, next.typed // not out: it is guarded by the cache
		cache.keep(prev)
		kept = true
	} // else the store holds a newer one: load it next time
	return nil
}

// advanceNext saves the state the executor reported for s, when there is
// one, as the snapshot following the stored one (sn.next), which supplies
// the first operator and time: the cache's entry, whose fields a save
// would otherwise continue, is neither read nor updated. An entry left
// there falls behind the store, which is harmless (see snapCache). It
// reports false, having saved nothing, when there is no such state or
// nothing stored to continue (s is not the aggregate's first stream), for
// advance to carry on as without it.
func (sn *Snapshotter) advanceNext(ctx context.Context, s *factum.EventStream) (bool, error) {
	st, ok := sn.hints.take(s.AggregateID, s.Version)
	if !ok || st.ID.TenantOrDefault() != s.AggregateID.TenantOrDefault() {
		return false, nil
	}
	var none snapshot.Snapshot
	_, based, err := sn.next.SaveEncodedNext(ctx, sn.snapshotOf(&none, st, s, s), built.EncodedState{})
	if err != nil {
		return true, err
	}
	// Not saved though based: the store holds this version or a later
	// one already (a redelivery, or a repair).
	return based, nil
}

// typedFolder is a fast path of aggregate.Type that aggregate.Definition
// offers: it folds onto the domain-typed state it returned last, so that
// the snapshotter does not decode the stored state again for each stream.
// A type without it is folded with Type.Fold.
type typedFolder interface {
	FoldTyped(reg *codec.Registry, from aggregate.StoredState, typed aggregate.Typed, streams []factum.EventStream) (aggregate.StoredState, aggregate.Typed, error)
}

// build folds streams, which continue prev (the zero snapEntry for none),
// into the next snapshot. It consumes prev.typed.
func (sn *Snapshotter) build(typ aggregate.Type, prev snapEntry, streams []factum.EventStream) (snapEntry, error) {
	p := &prev.snap
	from := aggregate.StoredState{ID: streams[0].AggregateID}
	if p.Version > 0 {
		from = aggregate.StoredState{ID: p.AggregateID, Version: p.Version, OwnerID: p.OwnerID,
			Deleted: p.Deleted, EventTime: p.EventTime, State: p.State}
	}
	var next aggregate.StoredState
	var typed aggregate.Typed
	var err error
	if tf, ok := typ.(typedFolder); ok {
		next, typed, err = tf.FoldTyped(sn.codec, from, prev.typed, streams)
	} else {
		next, err = typ.Fold(sn.codec, from, streams)
	}
	if err != nil {
		return snapEntry{}, err
	}
	return snapEntry{typed: typed, snap: sn.snapshotOf(p, next, &streams[0], &streams[len(streams)-1])}, nil
}

// hinted returns the state the executor reported for s, when there is one
// and prev says all the snapshot needs besides (the first stream's owner
// and time, for an aggregate's first snapshot, come from version 1 only).
func (sn *Snapshotter) hinted(prev *snapshot.Snapshot, s *factum.EventStream) (aggregate.StoredState, bool) {
	if sn.hints == nil || prev.Version == 0 && s.Version != 1 {
		return aggregate.StoredState{}, false
	}
	st, ok := sn.hints.take(s.AggregateID, s.Version)
	if !ok || st.ID.TenantOrDefault() != s.AggregateID.TenantOrDefault() {
		return aggregate.StoredState{}, false
	}
	return st, true
}

// snapshotOf is the snapshot of state next, reached by the streams from
// first to last, which continue prev (the zero Snapshot for none).
func (sn *Snapshotter) snapshotOf(prev *snapshot.Snapshot, next aggregate.StoredState, first, last *factum.EventStream) snapshot.Snapshot {
	firstOperator, firstTime := prev.FirstOperator, prev.FirstEventTime
	if prev.Version == 0 {
		firstOperator, firstTime = first.OwnerID, first.CreateTime
	}
	return snapshot.Snapshot{
		AggregateID:    next.ID,
		OwnerID:        next.OwnerID,
		Version:        next.Version,
		EventID:        last.Events[len(last.Events)-1].ID,
		FirstOperator:  firstOperator,
		Operator:       last.OwnerID,
		FirstEventTime: firstTime,
		EventTime:      last.CreateTime,
		SnapshotTime:   sn.now(),
		Deleted:        next.Deleted,
		State:          next.State,
	}
}

// Regenerate rebuilds the aggregate's snapshot from its whole history and
// saves it whatever the strategy; an equal version repairs the stored one.
// It drops what the snapshotter and the executor hold of the aggregate,
// and returns the snapshot as stored.
func (sn *Snapshotter) Regenerate(ctx context.Context, typ aggregate.Type, id factum.AggregateID) (snapshot.Snapshot, error) {
	streams, err := sn.events.Load(ctx, id, 1, eventstore.MaxVersion)
	if err != nil {
		return snapshot.Snapshot{}, err
	}
	if len(streams) == 0 {
		return snapshot.Snapshot{}, factum.NotFound(fmt.Sprintf("aggregate %s not found", id)).With(id, 0, "", "")
	}
	if streams[0].AggregateID.TenantOrDefault() != id.TenantOrDefault() {
		return snapshot.Snapshot{}, factum.NewError(factum.CodeTenantMismatch,
			fmt.Sprintf("aggregate does not belong to tenant %q", id.TenantOrDefault())).With(id, 0, "", "")
	}
	next, err := sn.build(typ, snapEntry{}, streams)
	if err != nil {
		return snapshot.Snapshot{}, err
	}
	if _, err := sn.store.Save(ctx, next.snap); err != nil {
		return snapshot.Snapshot{}, err
	}
	// What the snapshotter and the executor hold of the aggregate may be
	// what the repair replaces: drop it all, so that both start again from
	// the repaired snapshot.
	if cache := sn.caches[id.NamedAggregate]; cache != nil {
		cache.drop(next.snap.AggregateID)
	}
	if sn.hints != nil {
		sn.hints.forget(next.snap.AggregateID)
	}
	if sn.forget != nil {
		sn.forget.Forget(next.snap.AggregateID)
	}
	return sn.store.Load(ctx, id)
}
