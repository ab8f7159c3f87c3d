package compensation

import (
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	"github.com/factum-go/factum"
)

// Status is where an execution stands.
type Status string

// The statuses. SUCCEEDED is terminal, except that a new failure of the
// same function on the same event reopens the execution (see
// recordExecutionFailure).
const (
	// StatusFailed: the last attempt failed; the scheduler retries it when
	// due, if the execution is retryable.
	StatusFailed Status = "FAILED"
	// StatusPrepared: a retry holds the execution until its timeout.
	StatusPrepared Status = "PREPARED"
	// StatusSucceeded: a retry handled the event.
	StatusSucceeded Status = "SUCCEEDED"
)

// Valid reports whether s is one of the statuses.
func (s Status) Valid() bool {
	return s == StatusFailed || s == StatusPrepared || s == StatusSucceeded
}

// Recoverability says whether retrying a failure may help.
type Recoverability string

// The recoverabilities. The scheduler retries recoverable and unknown
// failures; an unrecoverable one waits for an operator.
const (
	// Recoverable: the failure is transient; retrying may succeed.
	Recoverable Recoverability = "RECOVERABLE"
	// Unrecoverable: retrying the same event cannot succeed without a
	// change (code, data, configuration) that an operator must make.
	Unrecoverable Recoverability = "UNRECOVERABLE"
	// RecoverabilityUnknown: nothing said either way; retried.
	RecoverabilityUnknown Recoverability = "UNKNOWN"
)

// Valid reports whether r is one of the recoverabilities.
func (r Recoverability) Valid() bool {
	return r == Recoverable || r == Unrecoverable || r == RecoverabilityUnknown
}

// ParseRecoverability parses a recoverability name, as the HTTP API and
// the CLI receive it. The empty string is an error.
func ParseRecoverability(s string) (Recoverability, error) {
	r := Recoverability(s)
	if !r.Valid() {
		return "", factum.IllegalArgument(fmt.Sprintf("recoverability %q: want RECOVERABLE, UNRECOVERABLE or UNKNOWN", s))
	}
	return r, nil
}

// The default retry spec (the reference's defaults).
const (
	DefaultMaxRetries       = 10
	DefaultMinBackoff       = 180 * time.Second
	DefaultExecutionTimeout = 120 * time.Second
)

// RetrySpec governs the automatic retries of one execution. An execution
// records its spec when it is created; operators change it with
// Service.ApplyRetrySpec.
type RetrySpec struct {
	// MaxRetries bounds the scheduler's retries; force retries by an
	// operator ignore it.
	MaxRetries int
	// MinBackoff is the wait before the first retry; the wait after the
	// k-th retry is MinBackoff × 2^k.
	MinBackoff time.Duration
	// ExecutionTimeout bounds one retry: the function's context ends then,
	// and a retry still PREPARED after it may be taken over by another
	// scheduler.
	ExecutionTimeout time.Duration
}

// DefaultRetrySpec returns 10 retries, 180 s minimum backoff and a 120 s
// execution timeout.
func DefaultRetrySpec() RetrySpec {
	return RetrySpec{MaxRetries: DefaultMaxRetries, MinBackoff: DefaultMinBackoff, ExecutionTimeout: DefaultExecutionTimeout}
}

// withDefaults fills zero fields from def; configuration uses it, so that a
// zero field there means "the default". Commands take specs literally.
func (s RetrySpec) withDefaults(def RetrySpec) RetrySpec {
	if s.MaxRetries == 0 {
		s.MaxRetries = def.MaxRetries
	}
	if s.MinBackoff == 0 {
		s.MinBackoff = def.MinBackoff
	}
	if s.ExecutionTimeout == 0 {
		s.ExecutionTimeout = def.ExecutionTimeout
	}
	return s
}

// Validate reports an IllegalArgument error unless MaxRetries is at least
// 0 (0: no automatic retries) and both durations are at least a
// millisecond, the precision executions keep times at.
func (s RetrySpec) Validate() error {
	switch {
	case s.MaxRetries < 0:
		return factum.IllegalArgument(fmt.Sprintf("retry spec: max retries %d is negative", s.MaxRetries))
	case s.MinBackoff < time.Millisecond:
		return factum.IllegalArgument(fmt.Sprintf("retry spec: minimum backoff %v is below 1ms", s.MinBackoff))
	case s.ExecutionTimeout < time.Millisecond:
		return factum.IllegalArgument(fmt.Sprintf("retry spec: execution timeout %v is below 1ms", s.ExecutionTimeout))
	}
	return nil
}

// Backoff returns the wait after the retries-th retry: MinBackoff ×
// 2^retries, saturating instead of overflowing.
func (s RetrySpec) Backoff(retries int) time.Duration {
	d := s.MinBackoff
	for i := 0; i < retries; i++ {
		if d > maxBackoff/2 {
			return maxBackoff
		}
		d *= 2
	}
	return d
}

// maxBackoff caps Backoff far beyond any useful wait, below overflow.
const maxBackoff = 100 * 365 * 24 * time.Hour

// retrySpecJSON is the JSON form: durations as integer milliseconds, with
// the unit in the name, so HTTP clients and queries read plain numbers.
type retrySpecJSON struct {
	MaxRetries         int   `json:"maxRetries"`
	MinBackoffMs       int64 `json:"minBackoffMs"`
	ExecutionTimeoutMs int64 `json:"executionTimeoutMs"`
}

// MarshalJSON encodes the spec with durations in milliseconds.
func (s RetrySpec) MarshalJSON() ([]byte, error) {
	return json.Marshal(retrySpecJSON{s.MaxRetries, s.MinBackoff.Milliseconds(), s.ExecutionTimeout.Milliseconds()})
}

// UnmarshalJSON decodes the form MarshalJSON writes.
func (s *RetrySpec) UnmarshalJSON(b []byte) error {
	var w retrySpecJSON
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	*s = RetrySpec{MaxRetries: w.MaxRetries, MinBackoff: time.Duration(w.MinBackoffMs) * time.Millisecond,
		ExecutionTimeout: time.Duration(w.ExecutionTimeoutMs) * time.Millisecond}
	return nil
}

// Time is an instant kept to the millisecond, in UTC, and encoded in JSON
// as epoch milliseconds: the form the query language compares times in,
// so that snapshot queries can select due executions.
type Time struct{ time.Time }

// TimeOf returns t as a Time (truncated to the millisecond).
func TimeOf(t time.Time) Time {
	if t.IsZero() {
		return Time{}
	}
	return Time{time.UnixMilli(t.UnixMilli()).UTC()}
}

// Millis returns the epoch milliseconds, 0 for the zero Time.
func (t Time) Millis() int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixMilli()
}

// MarshalJSON encodes t as epoch milliseconds (0 for the zero Time).
func (t Time) MarshalJSON() ([]byte, error) {
	return strconv.AppendInt(nil, t.Millis(), 10), nil
}

// UnmarshalJSON decodes epoch milliseconds; 0 and null are the zero Time.
func (t *Time) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		*t = Time{}
		return nil
	}
	var ms int64
	if err := json.Unmarshal(b, &ms); err != nil {
		return fmt.Errorf("compensation time: want epoch milliseconds: %w", err)
	}
	if ms == 0 {
		*t = Time{}
		return nil
	}
	*t = Time{time.UnixMilli(ms).UTC()}
	return nil
}

// ErrorInfo is a failure as an execution keeps it.
type ErrorInfo struct {
	// Code is the stable error code.
	Code factum.Code `json:"code"`
	// Message is the first line of the error message, bounded.
	Message string `json:"message"`
	// Details is the whole error text (a panic's stack included), bounded.
	Details string `json:"details,omitempty"`
}

// Bounds on the stored error text, so that one runaway error cannot bloat
// every stream and snapshot of its execution.
const (
	maxMessageLen = 1024
	maxDetailsLen = 16 << 10
)

// ErrorInfoOf describes err: its code (factum.CodeOf; InternalServerError
// for a code factum does not define), the first line of its message and
// its full text, truncated to bounded lengths.
func ErrorInfoOf(err error) ErrorInfo {
	if err == nil {
		return ErrorInfo{Code: factum.CodeOk}
	}
	msg := factum.MessageOf(err)
	for i := 0; i < len(msg); i++ {
		if msg[i] == '\n' {
			msg = msg[:i]
			break
		}
	}
	code := factum.CodeOf(err)
	if !code.Valid() || code == factum.CodeOk {
		// An error made up with a code of its own, or claiming success:
		// recorded as what it is to factum, an internal failure, rather
		// than refused (a refused record would hold its consumer forever).
		code = factum.CodeInternalServerError
	}
	return ErrorInfo{Code: code, Message: truncate(msg, maxMessageLen), Details: truncate(err.Error(), maxDetailsLen)}
}

// truncate cuts s to at most n bytes without splitting a UTF-8 sequence.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	i := n
	for i > 0 && s[i]&0xC0 == 0x80 {
		i--
	}
	return s[:i] + "…"
}
