// Package consumertest is the contract kit for running event functions
// over a log: a consumer (event.Consumer, or any other that runs an
// event.Processor) together with the event store whose log it reads and
// the checkpoint store that keeps its place. Every such combination, in
// factum or outside it, proves itself by calling [Run] from a test, the way
// testing/fstest.TestFS checks a file system.
//
// The kit checks what projections, event handlers and sagas rely on:
//
//   - without failures, every stream is handled exactly once, one
//     aggregate's streams in version order, across a graceful restart;
//   - with failures, every stream is still handled at least once, and
//     every failure is recorded (and signalled as a failure) before the
//     consumer moves on;
//   - the checkpoint never passes a failure that could not be recorded: the
//     streams after it wait, and the failed stream is delivered again,
//     after a restart too;
//   - a new consumer group replays the log from the start, and a restarted
//     one resumes from its checkpoint.
package consumertest
