package eventstore

import "github.com/factum-go/factum"

// Outcome is what became of one append, as a store's writer reports it to
// the Append waiting for it. The SQL stores write appends in batches on
// other goroutines; the outcome crosses back, and Append builds the error
// from its own stream (Err), so every store reports a refusal alike.
type Outcome uint8

const (
	Appended         Outcome = iota // stored; the stream has its position
	RefusedTenant                   // TenantMismatch
	RefusedRequest                  // DuplicateRequestID
	RefusedAggregate                // DuplicateAggregateID
	RefusedVersion                  // VersionConflict
	Failed                          // not appended, or not known to be; an error says why
)

// Err returns the contract's error for the refusal of s, and nil for
// Appended and Failed (a failure carries an error of its own).
func (o Outcome) Err(s *factum.EventStream) error {
	switch o {
	case RefusedTenant:
		return TenantMismatch(s)
	case RefusedRequest:
		return DuplicateRequestID(s)
	case RefusedAggregate:
		return DuplicateAggregateID(s)
	case RefusedVersion:
		return VersionConflict(s)
	}
	return nil
}
