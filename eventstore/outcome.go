package eventstore

import "github.com/factum-go/factum"

// Outcome is what became of one append, as a [Backend] reports it to the
// front end, which builds the contract's error from the caller's own
// stream, so every store reports a refusal alike. (The SQL stores write
// appends in batches on other goroutines; the outcome is what crosses
// back.)
type Outcome uint8

const (
	Appended         Outcome = iota // stored; the stream has its position
	RefusedTenant                   // TenantMismatch
	RefusedRequest                  // DuplicateRequestID
	RefusedAggregate                // DuplicateAggregateID
	RefusedVersion                  // VersionConflict
	Failed                          // not appended, or not known to be; an error says why
)

// err returns the contract's error for the refusal of s, and nil for
// Appended and Failed (a failure carries an error of its own).
func (o Outcome) err(s *factum.EventStream) error {
	switch o {
	case RefusedTenant:
		return tenantMismatch(s)
	case RefusedRequest:
		return duplicateRequestID(s)
	case RefusedAggregate:
		return duplicateAggregateID(s)
	case RefusedVersion:
		return versionConflict(s)
	}
	return nil
}
