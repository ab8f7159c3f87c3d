package snapshotter

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/event"
	"github.com/factum-go/factum/internal/built"
	"github.com/factum-go/factum/snapshot"
)

// batch is what one consumer's streams left to save: the last snapshot
// folded per aggregate, and the SNAPSHOT signals that wait for their save.
// The consumer's functions fold into it (marked by its context key); its
// checkpoint saves and log reads save it first (see Component).
type batch struct {
	sn       *Snapshotter
	notify   func(factum.Signal)
	failures event.FailureRecorder

	mu      sync.Mutex
	pending map[factum.AggregateID]*snapEntry // by aggregate, tenant set; each checked out of its cache
	held    []factum.Signal

	// flushing makes one flush at a time, which reuses the buffers below
	// from one batch to the next: the map and slice pending and held
	// change places with, the entries in save order and their snapshots.
	flushing    sync.Mutex
	freePending map[factum.AggregateID]*snapEntry
	freeHeld    []factum.Signal
	entries     []*snapEntry
	snaps       []snapshot.Snapshot
}

// batchKey marks a function's context as run by a batched consumer; its
// value is the *batch.
type batchKey struct{}

// batched returns cfg with the consumer's log, checkpoints, leases and
// signals going through a new batch, and its functions' calls in Run
// marked as folding into it.
func (sn *Snapshotter) batched(cfg event.Config) event.Config {
	b := &batch{sn: sn, notify: cfg.Notify, failures: cfg.Failures,
		pending: map[factum.AggregateID]*snapEntry{}, freePending: map[factum.AggregateID]*snapEntry{}}
	cfg.Log = batchLog{b, cfg.Log}
	cfg.Checkpoints = batchCheckpoints{b, cfg.Checkpoints}
	if cfg.Leases != nil {
		cfg.Leases = batchLeases{b, cfg.Leases}
	}
	cfg.Notify = b.signal
	// The checkpoint rides in the transaction that saves the batch's
	// snapshots, at no commit of its own, so it is saved after every read
	// rather than batched by the consumer: the consumer's batching would
	// leave the snapshots to be saved alone before the next read and the
	// checkpoint in a second transaction later.
	cfg.CheckpointInterval = -1
	// The consumer's own deliveries fold into the batch; a delivery from
	// elsewhere (a compensation's, through Redeliver) saves at once, as
	// no flush of the batch would follow it.
	work := cfg.WorkContext
	cfg.WorkContext = func(ctx context.Context) context.Context {
		if work != nil {
			ctx = work(ctx)
		}
		return context.WithValue(ctx, batchKey{}, b)
	}
	return cfg
}

// batchOf returns the batch ctx folds into, nil outside a batched
// consumer (a compensation retry, say, which saves at once).
func batchOf(ctx context.Context) *batch {
	b, _ := ctx.Value(batchKey{}).(*batch)
	return b
}

func pendingKey(id factum.AggregateID) factum.AggregateID {
	id.Tenant = id.TenantOrDefault()
	return id
}

// take removes and returns the aggregate's pending entry, nil for none.
func (b *batch) take(key factum.AggregateID) *snapEntry {
	b.mu.Lock()
	defer b.mu.Unlock()
	pe := b.pending[key]
	if pe != nil {
		delete(b.pending, key)
	}
	return pe
}

// put makes pe the aggregate's pending entry, unless a newer one is there
// (a requeue meeting a later fold).
func (b *batch) put(key factum.AggregateID, pe *snapEntry) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if old := b.pending[key]; old != nil && old.snap.Version > pe.snap.Version {
		return
	}
	b.pending[key] = pe
}

// signal holds a successful signal until the save that covers its stream
// has committed; a failure's signal goes out at once.
func (b *batch) signal(sig factum.Signal) {
	if b.notify == nil {
		return
	}
	if sig.Code != factum.CodeOk {
		b.notify(sig)
		return
	}
	b.mu.Lock()
	b.held = append(b.held, sig)
	b.mu.Unlock()
}

// busy reports whether anything waits for a save.
func (b *batch) busy() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.pending) > 0 || len(b.held) > 0
}

// checkpointAt is a checkpoint a flush saves after (or with) the
// snapshots.
type checkpointAt struct {
	store event.CheckpointStore
	group factum.Function
	pos   factum.Position
}

// flush saves the pending snapshots and then, with cp, the checkpoint (in
// the snapshots' transaction where the store can), and sends the held
// signals. On an error what it could not save stays pending, with its
// signals, for the next flush, and the checkpoint is not saved.
func (b *batch) flush(ctx context.Context, cp *checkpointAt) error {
	b.flushing.Lock()
	defer b.flushing.Unlock()
	b.mu.Lock()
	pend, held := b.pending, b.held
	b.pending, b.held = b.freePending, b.freeHeld[:0]
	b.freeHeld = nil // b.held's now; given back below
	b.mu.Unlock()

	entries := b.entries[:0]
	for _, pe := range pend {
		entries = append(entries, pe)
	}
	clear(pend)
	b.freePending = pend
	defer func() {
		clear(entries) // hold no entry until the next flush
		b.entries = entries[:0]
	}()
	// One order for every batch, so that concurrent transactions lock
	// rows in the same order.
	slices.SortFunc(entries, func(x, y *snapEntry) int {
		a, b := &x.snap.AggregateID, &y.snap.AggregateID
		return cmp.Or(cmp.Compare(a.Aggregate, b.Aggregate), cmp.Compare(a.ID, b.ID))
	})
	saved, failed, checkpointed, err := b.save(ctx, entries, cp)
	if err != nil {
		b.requeue(entries, held)
		return err
	}
	var failedKeys map[factum.AggregateID]error
	var requeue []*snapEntry
	for i, pe := range entries {
		switch {
		case failed != nil && failed[i] != nil:
			if rerr := b.record(ctx, pe, failed[i]); rerr != nil {
				// Not recorded: save it again later rather than lose it.
				requeue = append(requeue, pe)
				err = rerr
				continue
			}
			if failedKeys == nil {
				failedKeys = map[factum.AggregateID]error{}
			}
			failedKeys[pendingKey(pe.snap.AggregateID)] = failed[i]
			pe.stream = nil
			pe.cache.release(pe)
		case saved[i]:
			pe.snap.AggregateID.Tenant = pe.snap.AggregateID.TenantOrDefault()
			pe.stream = nil
			pe.cache.keep(pe)
		default: // the store holds a newer one: load it next time
			pe.stream = nil
			pe.cache.release(pe)
		}
	}
	if len(requeue) > 0 {
		again := make(map[factum.AggregateID]bool, len(requeue))
		for _, pe := range requeue {
			again[pendingKey(pe.snap.AggregateID)] = true
		}
		var kept, out []factum.Signal
		for _, sig := range held {
			if again[pendingKey(sig.AggregateID)] {
				kept = append(kept, sig)
			} else {
				out = append(out, sig)
			}
		}
		b.requeue(requeue, kept)
		held = out
	}
	for _, sig := range held {
		if ferr := failedKeys[pendingKey(sig.AggregateID)]; ferr != nil && sig.AggregateVersion <= versionOf(entries, sig.AggregateID) {
			fe := factum.AsError(ferr)
			sig.Code, sig.Message, sig.Bindings = fe.Code, factum.MessageOf(ferr), fe.Bindings
		}
		b.notify(sig)
	}
	clear(held) // hold no results or errors until the next batch
	b.mu.Lock()
	b.freeHeld = held[:0]
	b.mu.Unlock()
	if err != nil {
		return err
	}
	if cp != nil && !checkpointed {
		return cp.store.SaveCheckpoint(ctx, cp.group, cp.pos)
	}
	return nil
}

// versionOf returns the version of id's entry in entries.
func versionOf(entries []*snapEntry, id factum.AggregateID) int {
	key := pendingKey(id)
	for _, pe := range entries {
		if pendingKey(pe.snap.AggregateID) == key {
			return pe.snap.Version
		}
	}
	return 0
}

// requeue puts entries and their signals back for the next flush, behind
// any newer entry a fold made meanwhile.
func (b *batch) requeue(entries []*snapEntry, held []factum.Signal) {
	for _, pe := range entries {
		b.put(pendingKey(pe.snap.AggregateID), pe)
	}
	b.mu.Lock()
	b.held = append(held, b.held...)
	b.mu.Unlock()
}

// save saves the entries' snapshots (and cp where the store joins it):
// as one batch when the store has the fast path, one by one otherwise and
// when the batch fails. failed[i] is the error a snapshot met for good
// (failed is nil when none did); err an error that holds the flush
// (nothing is lost: it is saved again).
func (b *batch) save(ctx context.Context, entries []*snapEntry, cp *checkpointAt) (saved []bool, failed []error, checkpointed bool, err error) {
	if len(entries) == 0 {
		return nil, nil, false, nil
	}
	snaps := b.snaps[:0]
	for _, pe := range entries {
		snaps = append(snaps, pe.snap)
	}
	defer func() {
		clear(snaps) // hold no state until the next flush
		b.snaps = snaps[:0]
	}()
	store := b.sn.store
	var berr error
	switch bs := store.(type) {
	case encodedBatchSaver:
		if b.sn.encBatch != nil {
			saved, checkpointed, berr = b.saveEncoded(ctx, entries, snaps, cp)
			break
		}
		// Not the store's own method (see encodedSaver): its other batch
		// saves, if any.
		switch bs := store.(type) {
		case CheckpointBatchSaver:
			saved, checkpointed, berr = bs.SaveBatchAt(ctx, snaps, cp.checkpoints(), cp.function(), cp.position())
		case BatchSaver:
			saved, berr = bs.SaveBatch(ctx, snaps)
		default:
			berr = errNoBatch
		}
	case CheckpointBatchSaver:
		if cp != nil {
			saved, checkpointed, berr = bs.SaveBatchAt(ctx, snaps, cp.store, cp.group, cp.pos)
			break
		}
		if s, ok := store.(BatchSaver); ok {
			saved, berr = s.SaveBatch(ctx, snaps)
		} else {
			saved, checkpointed, berr = bs.SaveBatchAt(ctx, snaps, nil, factum.Function{}, factum.Position{})
		}
	case BatchSaver:
		saved, berr = bs.SaveBatch(ctx, snaps)
	default:
		berr = errNoBatch
	}
	fail := func(i int, err error) {
		if err != nil && failed == nil {
			failed = make([]error, len(snaps))
		}
		if err != nil {
			failed[i] = err
		}
	}
	if berr == nil && len(saved) == len(snaps) {
		for i := range snaps {
			if !saved[i] {
				fail(i, b.whyNotSaved(ctx, &snaps[i]))
			}
		}
		return saved, failed, checkpointed, nil
	}
	// One by one, which tells the snapshot the store refuses from the
	// rest.
	saved, checkpointed = make([]bool, len(snaps)), false
	for i := range snaps {
		ok, err := store.Save(ctx, snaps[i])
		switch {
		case err == nil:
			saved[i] = ok
		case permanent(err):
			fail(i, err)
		default:
			return nil, nil, false, fmt.Errorf("snapshotter: save snapshot of %s v%d: %w", snaps[i].AggregateID, snaps[i].Version, err)
		}
	}
	return saved, failed, false, nil
}

// checkpoints, function and position are cp's, zero for a nil cp.
func (cp *checkpointAt) checkpoints() event.CheckpointStore {
	if cp == nil {
		return nil
	}
	return cp.store
}

func (cp *checkpointAt) function() factum.Function {
	if cp == nil {
		return factum.Function{}
	}
	return cp.group
}

func (cp *checkpointAt) position() factum.Position {
	if cp == nil {
		return factum.Position{}
	}
	return cp.pos
}

// saveEncoded saves the entries' snapshots, snaps, by the store's
// SaveBatchAtEncoded, which takes the executor's states as JSON unchecked.
func (b *batch) saveEncoded(ctx context.Context, entries []*snapEntry, snaps []snapshot.Snapshot, cp *checkpointAt) ([]bool, bool, error) {
	encoded := make([]bool, len(entries))
	for i, pe := range entries {
		encoded[i] = pe.encoded
	}
	return b.sn.encBatch.SaveBatchAtEncoded(ctx, snaps, encoded, cp.checkpoints(), cp.function(), cp.position(), built.EncodedState{})
}

// errNoBatch says the store has no batch fast path.
var errNoBatch = errors.New("snapshotter: no batch save")

// whyNotSaved tells a snapshot a newer version holds back (nil) from one
// of another tenant's aggregate, which Save refuses with an error.
func (b *batch) whyNotSaved(ctx context.Context, snap *snapshot.Snapshot) error {
	_, err := b.sn.store.Load(ctx, snap.AggregateID)
	if err != nil && factum.CodeOf(err) == factum.CodeTenantMismatch {
		return err
	}
	return nil
}

// permanent reports whether a save error is the store refusing the
// snapshot for good rather than failing.
func permanent(err error) bool {
	switch factum.CodeOf(err) {
	case factum.CodeIllegalArgument, factum.CodeIllegalState, factum.CodeBadRequest, factum.CodeTenantMismatch:
		return true
	}
	return false
}

// record records a snapshot the store refused for good as its last
// stream's failure.
func (b *batch) record(ctx context.Context, pe *snapEntry, err error) error {
	if b.failures == nil {
		return nil
	}
	s := pe.stream
	named := pe.snap.AggregateID.NamedAggregate
	fn := factum.Function{Context: named.Context, Processor: Processor, Name: named.Aggregate}
	f := event.Failure{Function: fn, Stage: factum.StageSnapshot, Stream: *s, Err: err, Attempts: 1, Time: b.sn.now()}
	if len(s.Events) > 0 {
		f.EventID = s.Events[0].ID
	}
	return b.failures.RecordFailure(ctx, f)
}

// batchLog saves the batch before each read of the log, so that the
// signals of one batch do not wait for the next. A batch left unsaved
// when the consumer waits for appends (its save failed) ends the wait at
// once: the read that follows saves it, or fails and is tried again after
// the consumer's backoff, rather than holding the signals for a wait.
type batchLog struct {
	b   *batch
	log event.LogReader
}

func (l batchLog) ReadLog(ctx context.Context, after factum.Position, limit int) ([]factum.EventStream, error) {
	if l.b.busy() {
		if err := l.b.flush(context.WithoutCancel(ctx), nil); err != nil {
			return nil, err
		}
	}
	return l.log.ReadLog(ctx, after, limit)
}

func (l batchLog) WaitLog(ctx context.Context, after factum.Position) error {
	if l.b.busy() {
		return nil
	}
	return l.log.WaitLog(ctx, after)
}

// batchCheckpoints saves the batch with each checkpoint.
type batchCheckpoints struct {
	b  *batch
	cp event.CheckpointStore
}

func (c batchCheckpoints) Checkpoint(ctx context.Context, group factum.Function) (factum.Position, error) {
	return c.cp.Checkpoint(ctx, group)
}

func (c batchCheckpoints) SaveCheckpoint(ctx context.Context, group factum.Function, pos factum.Position) error {
	return c.b.flush(ctx, &checkpointAt{store: c.cp, group: group, pos: pos})
}

// batchLeases saves the batch before each fenced checkpoint.
type batchLeases struct {
	b *batch
	event.LeaseStore
}

func (l batchLeases) SaveFencedCheckpoint(ctx context.Context, lease event.Lease, pos factum.Position) error {
	if err := l.b.flush(ctx, nil); err != nil {
		return err
	}
	return l.LeaseStore.SaveFencedCheckpoint(ctx, lease, pos)
}
