package eventstore

import (
	"context"
	"time"

	"github.com/factum-go/factum"
)

// Backend is what a storage technology implements to be an event store:
// the small contract under the front end ([Front]), as database/sql/driver
// is under database/sql. The front end has done what every backend would
// otherwise repeat before it calls a method: the context is live, the
// stream is valid (s.Validate), ranges and limits are in bounds, and the
// identity is of the store's bounded context when the front end serves
// one (Config.Context). It also shapes the refusals into the contract's
// errors and wakes the store's own log waiters after each append. A
// backend is safe for concurrent use.
//
// A backend may implement the optional fast paths [RequestFinder],
// [RequestProber], [TimeLoader], [AggregateScanner] and [LogWaiter]; the
// front end falls back to a generic implementation over Load and ReadLog
// for each it lacks, and the contract kit (eventstoretest) checks that
// every fast path answers as its fallback does. [GroupBackend], the
// append of several streams of one aggregate all or none, has no fallback:
// without it the front end serves no groups.
type Backend interface {
	// Append stores s as the next version of its aggregate, setting its
	// tenant to the effective one (s.AggregateID.TenantOrDefault) and its
	// Position, or reports the refusal that applies in the contract's
	// precedence (RefusedTenant, RefusedRequest, RefusedAggregate,
	// RefusedVersion) with a nil error. Failed comes with an error saying
	// why; the stream may then be stored or not (ctx ended while it was
	// written), and nothing else is stored.
	Append(ctx context.Context, s *factum.EventStream) (Outcome, error)

	// Load returns the aggregate's streams with from <= version <= to, in
	// version order; 1 <= from <= to <= MaxVersion. No streams is an empty,
	// non-nil slice.
	Load(ctx context.Context, id factum.AggregateID, from, to int) ([]factum.EventStream, error)

	// ReadLog returns up to limit (>= 1) streams of the global log after
	// position after, in log order, as Store.ReadLog documents.
	ReadLog(ctx context.Context, after factum.Position, limit int) ([]factum.EventStream, error)
}

// RequestFinder is the fast path of Store.Lookup and Store.RequestExists:
// FindRequest returns the aggregate's stream with the request ID, found
// only in id's tenant, and false when there is none. The fallback loads
// the whole aggregate and looks through it.
type RequestFinder interface {
	FindRequest(ctx context.Context, id factum.AggregateID, requestID string) (factum.EventStream, bool, error)
}

// RequestProber is the fast path of Store.RequestExists, answering as
// FindRequest does without returning the stream. The fallback is
// FindRequest (fast path or fallback).
type RequestProber interface {
	HasRequest(ctx context.Context, id factum.AggregateID, requestID string) (bool, error)
}

// TimeLoader is the fast path of Store.LoadByTime, over a valid range
// (start <= end). The fallback loads the whole aggregate and keeps the
// streams created in [start, end).
type TimeLoader interface {
	LoadByTime(ctx context.Context, id factum.AggregateID, start, end time.Time) ([]factum.EventStream, error)
}

// AggregateScanner is the fast path of Store.ScanAggregateIDs, with limit
// >= 1. The fallback reads the whole global log, so a backend that serves
// scans in production implements it.
type AggregateScanner interface {
	ScanAggregateIDs(ctx context.Context, named factum.NamedAggregate, afterID string, limit int) ([]factum.AggregateID, error)
}

// LogWaiter is the fast path of Store.WaitLog: it blocks until the log may
// hold a stream after position after, woken is closed, or ctx ends
// (returning ctx's error). woken is closed by the next append through the
// front end, which therefore wakes its own waiters once for every
// backend; a LogWaiter returns nil when it is closed, and adds what only
// it knows of (appends by other processes). woken tells only of appends
// after the call, so a LogWaiter returns nil at once when the log holds a
// readable stream after the position already, whoever appended it (its
// own record of its last append may answer that without a look at the
// log). The fallback reads the log first, then again every
// Config.PollInterval.
type LogWaiter interface {
	WaitLog(ctx context.Context, after factum.Position, woken <-chan struct{}) error
}
