// Package nats runs factum on NATS JetStream: partitions of each bounded
// context's aggregates with one owner each, by leases in a JetStream
// key-value bucket, a durable command bus that delivers each command to
// its partition's owner, and the publication of the global log to a JetStream
// stream for subscribers outside factum.
//
// # Partitions and ownership
//
// An aggregate belongs to partition PartitionOf(id, n): a stable hash of its
// ID, the same in every instance and every release. [Partitions] keeps this
// instance's share of a context's partitions: it claims free partitions up
// to its fair share (the partition count divided by the live instances,
// ±1), renews the ones it holds and gives up any above its share, so that
// instances that join or leave rebalance by themselves.
//
// A partition's lease is its key in the bucket; every claim and renewal is
// a compare-and-set on the key's revision, so two instances can never both
// succeed in taking or keeping one. The holder treats its lease as valid
// until Lease (less a safety margin) after it sent its last successful
// renewal; an instance takes a lapsed lease only after it has seen the key
// unchanged for Lease, and with a compare-and-set on the revision it saw.
// Together: an instance that cannot renew (NATS unreachable, the process
// paused) stops acting on a partition before anyone else can take it. The
// clocks involved are each instance's own monotonic clock, never a clock
// of another machine, so skew between machines does not matter; only their
// rates must agree within the margin (a tenth of the lease).
//
// The claim's revision is the partition's fencing token: it grows with
// every new owner, so a downstream system can refuse a stale holder.
// factum's own safety net stays the event store's version check.
//
// # The command bus
//
// [NewBus] makes the engine's command bus (engine.Config.Bus) for the
// context of a [Partitions]. A command for a partition this instance owns is
// processed here ([LocalMode]: at once, or stored first); any other is
// published to a JetStream work-queue stream on subject
// prefix.context.aggregate.partition ([CommandSubject]), with the command ID
// as Nats-Msg-Id, and Send returns once JetStream stored it. Sends of one
// aggregate that overlap travel together: while one publish of the
// aggregate's commands is in flight, the next ones wait and then go as one
// batch message ([HeaderBatch], up to [BusConfig].MaxBatch commands), a
// group commit per aggregate. Each owner consumes its partitions with a
// durable consumer made anew per claim, in stream order, through lanes that
// run one aggregate's commands one at a time, or as one run of the executor
// (command.RunExecutor) when several wait together (a batch, or commands
// accepted here queued behind one another; up to [BusConfig].MaxRun), and
// acknowledges a message once the executor processed its commands. A
// batch whose claim ends while it runs keeps its order with LocalFirst:
// the commands up to the last one that succeeded have their outcomes, the
// ones after it are handed over to the next owner ([HandedSubject]); with
// LocalNever and LocalDurable it stays on the stream whole, and the next
// owner decides again a command of it that failed here, after the later
// commands of the batch appended here. A redelivery, or a command stored
// twice (sent again after a lost acknowledgement of its batch), is
// recognised by its request ID in the event store: JetStream's
// de-duplication by Nats-Msg-Id covers a command sent alone again. A command
// starts only while its claim holds, so an instance that gives a partition
// up or loses it stops acting on it first. Every command carries its origin
// instance ([HeaderOrigin]) in the message and in its header; an
// [OriginSink] routes its PROCESSED signal there. A send that cannot reach
// NATS or the partition's owner fails at once with an [UnavailableError]
// (retryable; HTTP 503 with Retry-After).
//
// # The global log for others
//
// [LogPublisher] is an event processor that publishes every stream of a
// context's log, once JetStream has stored it and before its consumer's
// checkpoint moves, as one message: subject prefix.context.aggregate
// ([LogSubject]), the stream as JSON, Nats-Msg-Id the stream ID (so a
// redelivery is dropped by JetStream's de-duplication window) and the
// tenant, aggregate ID and version as headers. [EnsureLog] creates the
// stream. docs/scale-out.md documents the subjects and the payload for
// subscribers in any language.
//
// # Waits across instances
//
// [Signals] carries wait signals to the instance that waits for them: the
// one whose gateway sent the command, named by the factum.OriginHeader its
// bus stamps on every command ([Signals.Bus]) and so by every signal's
// Origin. Signals of this instance's own commands stay in the process; the
// others are published on prefix.<origin> ([SignalSubject]) over the
// instance's NATS connection, and each instance delivers what arrives on
// its own subject into its waiters. A lost signal ends its wait as a
// RequestTimeout at the caller's own timeout, which the gateway's Lookup
// settles from any instance.
//
// Only the signals the waiting send can use travel: the gateway hands its
// bus the stage each send waits for (command.WithWaitStage), [Signals.Bus]
// stamps it beside the origin as factum.OriginWaitHeader (replacing or
// deleting any value the command had: a saga's command inherits its
// source stream's header, not its wait; [Bus] keeps it only when it names
// the send's wait, and deletes it otherwise, also without Signals.Bus),
// the signal makers copy it into factum.Signal.OriginWait, and [Signals]
// does not publish to another instance a signal that wait cannot use
// (command.WaitUses: nothing for a wait for SENT, PROCESSED alone for one
// for PROCESSED, everything for a branch stage), counting it in
// [SignalStats].Unwaited. A command without the header (an older
// instance, a producer outside factum) has all its signals sent; this
// instance's own signals stay local, whatever their wait. An older
// instance's saga command may carry the header its source stream had,
// which that instance does not know to delete: see docs/scale-out.md,
// Waits across instances, for rolling upgrades.
//
// [Partitions.View] is the cluster as one instance sees it: the live
// instances and the partitions each holds.
package nats
