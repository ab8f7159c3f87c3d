package eventstore

import (
	"context"
	"math"
	"time"

	"github.com/factum-go/factum"
)

// MaxVersion as the upper bound of Load means "to the last stream".
const MaxVersion = math.MaxInt32

// Store is an event store. Implementations are safe for concurrent use and
// keep the whole contract of the package documentation; the contract kit in
// eventstoretest proves it.
//
// Streams passed to Append and returned by loads are owned by the store
// afterwards: callers must not modify them.
type Store interface {
	// Append stores s as the next version of its aggregate and sets
	// s.Position. It refuses, atomically: TenantMismatch,
	// DuplicateRequestId, DuplicateAggregateId, EventVersionConflict (in
	// that precedence), and IllegalArgument for a stream that fails
	// s.Validate. On any error nothing is stored.
	Append(ctx context.Context, s *factum.EventStream) error

	// Load returns the aggregate's streams with from <= version <= to, in
	// version order; to may be MaxVersion. A range with from < 1 or
	// to < from is IllegalArgument. No streams is an empty result, not an
	// error.
	Load(ctx context.Context, id factum.AggregateID, from, to int) ([]factum.EventStream, error)

	// LoadByTime returns the aggregate's streams created in [start, end), in
	// version order. end before start is IllegalArgument.
	LoadByTime(ctx context.Context, id factum.AggregateID, start, end time.Time) ([]factum.EventStream, error)

	// RequestExists reports whether the aggregate, in id's tenant, has a
	// stream with the request ID: false for an aggregate of another tenant.
	RequestExists(ctx context.Context, id factum.AggregateID, requestID string) (bool, error)

	// Lookup returns the aggregate's stream with the request ID, or a
	// NotFound error naming only id and requestID; an aggregate of another
	// tenant than id's is NotFound too.
	Lookup(ctx context.Context, id factum.AggregateID, requestID string) (factum.EventStream, error)

	// ScanAggregateIDs returns up to limit IDs of aggregates of the type
	// whose ID sorts after afterID (byte order; "" starts at the first), in
	// that order, each with its tenant.
	ScanAggregateIDs(ctx context.Context, named factum.NamedAggregate, afterID string, limit int) ([]factum.AggregateID, error)

	// ReadLog returns up to limit streams of the global log after position
	// after, in log order. A reader that checkpoints the Position of the
	// last stream it handled and reads on from there sees every stream
	// exactly once, however appends interleave and commit.
	ReadLog(ctx context.Context, after factum.Position, limit int) ([]factum.EventStream, error)

	// WaitLog blocks until the log may hold a stream after position after,
	// or ctx ends (returning ctx's error). It may return early; readers
	// call ReadLog in a loop. It wakes at once for appends made through
	// this Store value, and returns at once when such an append, made
	// before the call, put a stream after the position that ReadLog
	// would return: a reader may wait after any read, a page shorter than
	// its limit included, without reading the log's end again first.
	// Streams other processes append end the wait as the store learns of
	// them (a notification, or a look at the log every poll interval).
	WaitLog(ctx context.Context, after factum.Position) error
}
