package idempotency

// The state machine's rules, in one place. The memory store applies them
// under its lock. The SQL adapters write with conditional statements that
// encode the same rules (one statement cannot call Go) and use these
// functions to classify what they read back when a conditional write did
// not apply; the Redis adapter's Lua scripts restate them. The contract kit,
// idempotencytest, holds every backend to the same answers.

// BeginExisting applies Begin's rules to cur, the live record of k, for a
// caller presenting fingerprint. It returns:
//   - ErrConflict and no record when cur is bound to another fingerprint
//     (checked first, so no path returns another request's outcome);
//   - cur and ErrInProgress while another attempt holds the lease;
//   - cur and a nil error for a done or failed record (the replay);
//   - claim=true when cur is retryable: the caller may take the key over
//     with a new attempt.
func BeginExisting(k Key, cur Record, fingerprint string) (rec Record, claim bool, err error) {
	if cur.Fingerprint != fingerprint {
		return Record{}, false, OpError("begin", k, ErrConflict)
	}
	switch cur.State {
	case StateDone, StateFailed:
		return cur, false, nil
	case StateRetryable:
		return Record{}, true, nil
	default:
		return cur, false, OpError("begin", k, ErrInProgress)
	}
}

// CheckOwner applies the fence of Complete, Fail and Renew (named by op):
// attempt may act on k only if cur, the live record of k (found is false
// when there is none), is in progress, bound to fingerprint and owned by
// attempt. It returns nil when it may, and otherwise ErrLeaseExpired when
// there is no live record, ErrConflict when another fingerprint holds the
// key, or ErrStaleAttempt.
func CheckOwner(op string, k Key, cur Record, found bool, fingerprint string, attempt uint64) error {
	switch {
	case !found:
		return OpError(op, k, ErrLeaseExpired)
	case cur.Fingerprint != fingerprint:
		return OpError(op, k, ErrConflict)
	case cur.Attempt != attempt || cur.State != StateInProgress:
		return OpError(op, k, ErrStaleAttempt)
	}
	return nil
}

// Refusal is CheckOwner for a backend whose conditional write did not
// apply: it never returns nil. When the record read back looks owned by
// attempt (the write and the read saw different moments), the attempt has
// lost the key all the same, so the answer is ErrStaleAttempt.
func Refusal(op string, k Key, cur Record, found bool, fingerprint string, attempt uint64) error {
	if err := CheckOwner(op, k, cur, found, fingerprint, attempt); err != nil {
		return err
	}
	return OpError(op, k, ErrStaleAttempt)
}
