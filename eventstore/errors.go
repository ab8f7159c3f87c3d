package eventstore

import (
	"fmt"

	"github.com/factum-go/factum"
)

// The front end builds the append conflicts from the request, so every
// backend reports the same codes, identities and retryability.

// duplicateRequestID returns the error for a request ID the aggregate
// already has a stream for.
func duplicateRequestID(s *factum.EventStream) *factum.Error {
	e := factum.NewError(factum.CodeDuplicateRequestID,
		fmt.Sprintf("aggregate already has a stream for request %q", s.RequestID))
	return e.With(s.AggregateID, s.Version, s.CommandID, s.RequestID)
}

// duplicateAggregateID returns the error for a creating (version 1) stream
// whose aggregate already exists.
func duplicateAggregateID(s *factum.EventStream) *factum.Error {
	e := factum.NewError(factum.CodeDuplicateAggregateID, "aggregate already exists")
	return e.With(s.AggregateID, s.Version, s.CommandID, s.RequestID)
}

// versionConflict returns the error for a stream whose version is not the
// aggregate's last version + 1.
func versionConflict(s *factum.EventStream) *factum.Error {
	e := factum.NewError(factum.CodeEventVersionConflict,
		fmt.Sprintf("version %d is not the next version of the aggregate", s.Version))
	return e.With(s.AggregateID, s.Version, s.CommandID, s.RequestID)
}

// tenantMismatch returns the error for a stream naming a tenant other than
// the one its aggregate was created in.
func tenantMismatch(s *factum.EventStream) *factum.Error {
	e := factum.NewError(factum.CodeTenantMismatch,
		fmt.Sprintf("aggregate does not belong to tenant %q", s.AggregateID.TenantOrDefault()))
	return e.With(s.AggregateID, s.Version, s.CommandID, s.RequestID)
}

// checkRange validates a Load range.
func checkRange(from, to int) error {
	if from < 1 || to < from {
		return factum.IllegalArgument(fmt.Sprintf("version range [%d, %d]: want 1 <= from <= to", from, to))
	}
	return nil
}

// checkLimit validates a scan or log-read limit.
func checkLimit(limit int) error {
	if limit < 1 {
		return factum.IllegalArgument(fmt.Sprintf("limit %d: want at least 1", limit))
	}
	return nil
}

// NotFoundRequest returns the NotFound error Lookup reports when the
// aggregate has no stream for the request ID (in the caller's tenant); it
// names only id and requestID. Stores in front of a Store (caches, the
// command gateway's pre-check) report a missing request with it too.
func NotFoundRequest(id factum.AggregateID, requestID string) error {
	e := factum.NotFound("no stream for this request")
	return e.With(id, 0, "", requestID)
}
