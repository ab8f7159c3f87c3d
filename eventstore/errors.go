package eventstore

import (
	"fmt"

	"github.com/factum-go/factum"
)

// The constructors below build the append conflicts from the request, so
// every backend reports the same codes, identities and retryability.

// DuplicateRequestID returns the error for a request ID the aggregate
// already has a stream for.
func DuplicateRequestID(s *factum.EventStream) *factum.Error {
	e := factum.NewError(factum.CodeDuplicateRequestID,
		fmt.Sprintf("aggregate already has a stream for request %q", s.RequestID))
	return e.With(s.AggregateID, s.Version, s.CommandID, s.RequestID)
}

// DuplicateAggregateID returns the error for a creating (version 1) stream
// whose aggregate already exists.
func DuplicateAggregateID(s *factum.EventStream) *factum.Error {
	e := factum.NewError(factum.CodeDuplicateAggregateID, "aggregate already exists")
	return e.With(s.AggregateID, s.Version, s.CommandID, s.RequestID)
}

// VersionConflict returns the error for a stream whose version is not the
// aggregate's last version + 1.
func VersionConflict(s *factum.EventStream) *factum.Error {
	e := factum.NewError(factum.CodeEventVersionConflict,
		fmt.Sprintf("version %d is not the next version of the aggregate", s.Version))
	return e.With(s.AggregateID, s.Version, s.CommandID, s.RequestID)
}

// TenantMismatch returns the error for a stream naming a tenant other than
// the one its aggregate was created in.
func TenantMismatch(s *factum.EventStream) *factum.Error {
	e := factum.NewError(factum.CodeTenantMismatch,
		fmt.Sprintf("aggregate does not belong to tenant %q", s.AggregateID.TenantOrDefault()))
	return e.With(s.AggregateID, s.Version, s.CommandID, s.RequestID)
}

// CheckRange validates a Load range.
func CheckRange(from, to int) error {
	if from < 1 || to < from {
		return factum.IllegalArgument(fmt.Sprintf("version range [%d, %d]: want 1 <= from <= to", from, to))
	}
	return nil
}

// CheckLimit validates a scan or log-read limit.
func CheckLimit(limit int) error {
	if limit < 1 {
		return factum.IllegalArgument(fmt.Sprintf("limit %d: want at least 1", limit))
	}
	return nil
}
