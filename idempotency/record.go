package idempotency

import "time"

// State is the lifecycle state of one record.
//
//	absent ──Begin──► in progress ──Complete──► done       (replayed until retention ends)
//	                       │      └──Fail(false)► failed     (answered until retention ends)
//	                       │      └──Fail(true)─► retryable  (the next Begin takes over)
//	                       └─ lease ends ─► absent (the next Begin takes over)
type State string

// The states. Their string values are stored by the backends and never
// change.
const (
	// StateInProgress: one attempt owns the key until its lease ends.
	StateInProgress State = "in_progress"
	// StateDone: the operation finished; its response is replayed.
	StateDone State = "done"
	// StateFailed: the operation failed for good; duplicates are told so
	// instead of running again.
	StateFailed State = "failed"
	// StateRetryable: the attempt failed without effect; the next Begin
	// with the same fingerprint becomes the owner.
	StateRetryable State = "retryable"
)

// Valid reports whether s is one of the four states.
func (s State) Valid() bool {
	switch s {
	case StateInProgress, StateDone, StateFailed, StateRetryable:
		return true
	}
	return false
}

// Record is what a store keeps for one key.
type Record struct {
	// State is the lifecycle state.
	State State
	// Fingerprint identifies the request the key is bound to.
	Fingerprint string
	// Response is the stored outcome of a done record; nil otherwise.
	Response []byte
	// ExpiresAt is when the record stops counting: the end of the lease
	// while in progress, the end of retention afterwards. The record is
	// live strictly before ExpiresAt.
	ExpiresAt time.Time
	// Attempt is the fencing token of the attempt that owns (or last
	// owned) the key. Every new owner of a key gets a higher attempt than
	// any earlier owner of that key, and only the owning attempt may
	// complete, fail or renew it.
	Attempt uint64
}
