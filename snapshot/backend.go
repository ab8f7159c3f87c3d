package snapshot

import (
	"context"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/event"
	"github.com/factum-go/factum/query"
)

// Backend is what a storage technology implements to be a snapshot store:
// the small contract under the front end ([Front]), as database/sql/driver
// is under database/sql. Before it calls a method the front end has done
// what every backend would otherwise repeat: the context is live, the
// snapshot or identity is valid, it is of the store's bounded context when
// the front end serves one (Config.Context), and a saved snapshot's tenant
// is explicit and its times are truncated to the millisecond in UTC. It
// also turns the backend's answers into the contract's errors. A backend
// is safe for concurrent use.
//
// A backend may implement the optional fast path [Finder]; the front end
// falls back to a generic implementation over Scan without it, and the
// contract kit (snapshottest) checks that the fast path answers as the
// fallback does. A backend that can save many snapshots in one atomic
// write implements [BatchSaver] (and [CheckpointBatchSaver]), which the
// front end of [NewBatch] forwards; they have no fallback, as a loop of
// saves is not atomic.
type Backend interface {
	// Save stores s unless the backend holds a higher version of the
	// aggregate, inside one atomic write, and reports Saved or Stale; it
	// reports RefusedTenant, storing nothing, when the stored snapshot of
	// the aggregate belongs to another tenant. With an error the outcome
	// means nothing. s.State is the caller's: a backend that keeps it
	// copies it.
	Save(ctx context.Context, s Snapshot) (Outcome, error)

	// Load returns the stored snapshot of the aggregate, whatever tenant
	// it belongs to (its AggregateID names that tenant), and false when
	// there is none. The caller may keep the state.
	Load(ctx context.Context, id factum.AggregateID) (Snapshot, bool, error)

	// Scan returns up to limit (>= 1) stored snapshots of the aggregate
	// type, of every tenant, whose aggregate IDs are greater than afterID
	// in byte order, in that order. No snapshots is an empty slice.
	Scan(ctx context.Context, named factum.NamedAggregate, afterID string, limit int) ([]Snapshot, error)
}

// Outcome is what became of one save, as a [Backend] reports it to the
// front end, which builds the contract's answer from the caller's
// snapshot.
type Outcome uint8

const (
	Saved         Outcome = iota // stored: Store.Save reports true
	Stale                        // a higher version is stored: Store.Save reports false
	RefusedTenant                // another tenant's snapshot holds the aggregate: TenantMismatch
)

// Finder is the fast path of Store.Find and Store.Count, over a valid
// aggregate type of the store's context: the backend runs the plan itself
// (an SQL statement), with the semantics of package query. The fallback
// scans every snapshot of the type and evaluates the plan in memory.
type Finder interface {
	Find(ctx context.Context, named factum.NamedAggregate, plan query.Plan) ([]Snapshot, error)
	Count(ctx context.Context, named factum.NamedAggregate, cond query.Condition) (int64, error)
}

// BatchSaver is a backend's save of many snapshots in one atomic write,
// each as Save would (a version never moves backwards, an equal one
// repairs, a snapshot never changes tenant): on an error none is saved.
// The snapshots are valid, of the store's context and normalized as for
// Save; saved[i] reports whether snaps[i] was written, false meaning a
// newer version, or another tenant's snapshot, holds its aggregate.
type BatchSaver interface {
	SaveBatch(ctx context.Context, snaps []Snapshot) (saved []bool, err error)
}

// CheckpointBatchSaver is BatchSaver that, when checkpoints is a store
// the backend can write in the same transaction, also saves group's
// position pos there (as SaveCheckpoint would: never backwards) and
// reports checkpointed; otherwise it saves the snapshots alone and the
// caller saves the checkpoint. Group and position are valid when
// checkpoints is not nil.
type CheckpointBatchSaver interface {
	SaveBatchAt(ctx context.Context, snaps []Snapshot, checkpoints event.CheckpointStore, group factum.Function, pos factum.Position) (saved []bool, checkpointed bool, err error)
}
