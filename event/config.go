package event

import (
	"context"
	"log/slog"
	"time"

	"github.com/factum-go/factum"
)

// Config configures a Consumer. Zero fields take the documented defaults.
type Config struct {
	// Log is the event store's global log. Required.
	Log LogReader
	// Checkpoints keeps the group's position. Required.
	Checkpoints CheckpointStore
	// Failures records failures after the in-place retries; nil means
	// failures are only logged and signalled.
	Failures FailureRecorder
	// Notify receives one signal per function and stream handled, success
	// or failure. It must not block for long; nil discards signals.
	Notify func(factum.Signal)
	// Attempts is how many times a failing function is tried in place
	// before its failure is recorded (default 3). Errors that say they are
	// not retryable (a Retryable() bool method returning false, or a
	// business rejection's code) are recorded after the first.
	Attempts int
	// Backoff is the wait before the second attempt, doubling after each
	// (default 10 ms).
	Backoff time.Duration
	// HandlerTimeout bounds one attempt (default 2 min).
	HandlerTimeout time.Duration
	// Middleware wraps every function the consumer runs, outside the
	// processor's and the function's own (see Middleware); the first is
	// the outermost. Attempts, Backoff and HandlerTimeout configure the
	// default middleware (Retry, Timeout and Recover) inside them all.
	Middleware []Middleware
	// BatchSize is how many streams are read at a time (default 256).
	BatchSize int
	// CheckpointStreams and CheckpointInterval batch the checkpoint's
	// saves: once streams are handled past the saved position, the
	// consumer saves, after the read in hand, when at least
	// CheckpointStreams of them are unsaved (default BatchSize) or the
	// first of them has waited CheckpointInterval (default 100 ms),
	// whichever comes first, and always when it stops.
	// Under load a read returns a few streams at a time, and a save per
	// read cost a commit per stream or two. The checkpoint still never
	// passes a stream left unhandled; a crash delivers again the streams
	// handled since the last save, at most CheckpointStreams or
	// CheckpointInterval's worth, as any crash between a stream and its
	// save always could. A negative CheckpointInterval saves after every
	// read that moved the position.
	CheckpointStreams  int
	CheckpointInterval time.Duration
	// PollInterval bounds how long the consumer waits for a wake-up
	// before reading the log again, a fallback for stores whose wake-ups
	// can be missed (default 1 s).
	PollInterval time.Duration
	// Concurrency is how many streams of different aggregates the
	// consumer may handle at once (default 1); one aggregate's streams are
	// always handled in order. Above 1 it is only for functions that
	// tolerate being given a stream again that they handled already: when
	// a failure cannot be recorded, or the consumer stops, in the middle of
	// a batch, streams handled after the first one left unhandled are
	// delivered again. Notify and Failures are then called from several
	// goroutines at once. The runtime's snapshotter, which the store's
	// version guard makes idempotent, uses it.
	Concurrency int
	// Logger receives errors (default slog.Default()).
	Logger *slog.Logger
	// Now is the clock (default time.Now).
	Now func() time.Time

	// WorkContext, if set, derives the context Run's work runs under from
	// the one Run makes (Run's values, never cancelled): the calls of its
	// functions, its checkpoint saves and its failure records; Redeliver's
	// calls do not get it. A caller that wraps the consumer uses it to mark
	// the consumer's own deliveries with a value, once per Run rather than
	// by a middleware per call (a context per call, and Timeout's shared
	// deadline lost).
	WorkContext func(context.Context) context.Context

	// Leases, if set, makes the consumer run its group only while it
	// holds the group's lease, so that instances sharing the store run
	// each group once: it takes the lease (waiting while another instance
	// holds it), renews it three times per LeaseTTL, saves its checkpoint
	// only under it (LeaseStore.SaveFencedCheckpoint), and releases it
	// when it stops or steps down. When it cannot renew, it starts no
	// stream once the lease could lapse (a fifth of the TTL before the
	// store lets another instance take it); a stream in hand then
	// finishes, so a handler that runs longer than that margin, or a
	// process stalled for longer (a
	// loaded machine, a paused VM), overlaps the next holder, which is
	// given the stream again (the checkpoint never passed it), with the
	// streams handled since the last save. What the lease's token fences
	// is the checkpoint: it moves under one holder at a time, never back,
	// and over each stream once; delivery stays at least once. With
	// Concurrency above 1 the check is made per batch.
	Leases LeaseStore
	// Holder names this instance to the lease store; a new ID if empty.
	Holder string
	// LeaseTTL is the lease's length (default 10 s): how long a dead
	// instance holds its groups up.
	LeaseTTL time.Duration
}

// DefaultCheckpointInterval is Config.CheckpointInterval's default.
const DefaultCheckpointInterval = 100 * time.Millisecond
