package nats

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime"
	"strings"
	"time"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/command"
	"github.com/nats-io/nats.go/jetstream"
)

// BusConfig configures the JetStream command bus. JetStream and Partitions
// are required; zero fields take the defaults.
type BusConfig struct {
	// JetStream is the connection commands travel on; its NATS connection
	// tells the bus whether NATS is reachable.
	JetStream jetstream.JetStream
	// Partitions is this instance's share of the bounded context's
	// partitions (StartPartitions): the bus serves that context, processes
	// the commands of the partitions it owns, and sends the others to their
	// owners. Close it after the engine shut down.
	Partitions *Partitions
	// Stream is the JetStream stream; DefaultCommandStream if empty. Every
	// instance of a context must use the same one. NewBus creates it
	// (work-queue retention, file storage) if it does not exist.
	Stream string
	// SubjectPrefix starts the subjects; DefaultCommandSubjectPrefix if
	// empty. The stream takes prefix.>.
	SubjectPrefix string
	// Replicas of the stream when NewBus creates it; 1 if 0.
	Replicas int
	// Duplicates is the stream's de-duplication window when NewBus creates
	// it; DefaultCommandDuplicates if 0.
	Duplicates time.Duration
	// MaxPending bounds the messages waiting on one subject when NewBus
	// creates the stream (a batch counting as one); DefaultMaxPending if
	// 0.
	MaxPending int
	// MaxAckPending bounds each partition's messages delivered and not
	// yet processed (a batch counting as one); DefaultMaxAckPending if 0.
	MaxAckPending int
	// AckWait is how long JetStream waits for a delivered command's
	// acknowledgement before delivering it again; DefaultAckWait if 0.
	AckWait time.Duration
	// PublishTimeout bounds a send's wait for JetStream's
	// acknowledgement; DefaultPublishTimeout if 0.
	PublishTimeout time.Duration
	// RetryAfter is the hint of the UnavailableError a send fails with
	// when NATS or the partition's owner is unreachable; DefaultRetryAfter
	// if 0.
	RetryAfter time.Duration
	// Local says what to do with commands for partitions this instance
	// owns; LocalFirst if zero.
	Local LocalMode
	// Lanes, QueueSize and RejectWhenFull configure this instance's lanes,
	// as command.DispatcherConfig's do the in-process dispatcher: one
	// aggregate's commands run one at a time in order, different
	// aggregates in parallel.
	Lanes          int
	QueueSize      int
	RejectWhenFull bool
	// MaxBatch bounds the commands of one batch message: the commands of
	// one aggregate that this instance sends for JetStream to store while
	// a publish of that aggregate's commands is in flight wait for it to
	// end and then travel together, as one message (see HeaderBatch);
	// DefaultMaxBatch if 0, and 1 sends every command as a message of its
	// own. A batch also stays well under NATS's maximum payload.
	MaxBatch int
	// MaxRun bounds the commands this instance processes as one run of
	// the executor (command.RunExecutor), whose appends the event store
	// groups: the commands of one aggregate queued behind one another in
	// a lane, accepted here or delivered, alone or in batches, taken
	// across the bounds of their messages; command.DefaultMaxRun if 0,
	// and 1 processes every command on its own.
	MaxRun int
	// Logger receives what the bus cannot return (a consumer that fails
	// and is made again, an undecodable message); slog.Default() if nil.
	Logger *slog.Logger
}

func (c *BusConfig) defaults() error {
	if c.JetStream == nil || c.Partitions == nil {
		return factum.IllegalArgument("nats: the bus needs JetStream and Partitions")
	}
	if c.Stream == "" {
		c.Stream = DefaultCommandStream
	}
	if c.SubjectPrefix == "" {
		c.SubjectPrefix = DefaultCommandSubjectPrefix
	}
	if strings.ContainsAny(c.Stream, ". *>") || strings.ContainsAny(c.SubjectPrefix, " *>") {
		return factum.IllegalArgument(fmt.Sprintf("nats: stream %q or subject prefix %q holds a character NATS reserves", c.Stream, c.SubjectPrefix))
	}
	if c.Replicas < 0 || c.Duplicates < 0 || c.MaxPending < 0 || c.MaxAckPending < 0 || c.AckWait < 0 ||
		c.PublishTimeout < 0 || c.RetryAfter < 0 || c.Lanes < 0 || c.QueueSize < 0 || c.MaxBatch < 0 || c.MaxRun < 0 {
		return factum.IllegalArgument("nats: negative bus setting")
	}
	if c.Local != LocalFirst && c.Local != LocalNever && c.Local != LocalDurable {
		return factum.IllegalArgument(fmt.Sprintf("nats: unknown local mode %d", c.Local))
	}
	c.Replicas = max(c.Replicas, 1)
	if c.Duplicates == 0 {
		c.Duplicates = DefaultCommandDuplicates
	}
	if c.MaxPending == 0 {
		c.MaxPending = DefaultMaxPending
	}
	if c.MaxAckPending == 0 {
		c.MaxAckPending = DefaultMaxAckPending
	}
	if c.AckWait == 0 {
		c.AckWait = DefaultAckWait
	}
	if c.PublishTimeout == 0 {
		c.PublishTimeout = DefaultPublishTimeout
	}
	if c.RetryAfter == 0 {
		c.RetryAfter = DefaultRetryAfter
	}
	if c.Lanes == 0 {
		c.Lanes = 16 * runtime.GOMAXPROCS(0)
	}
	if c.QueueSize == 0 {
		c.QueueSize = 1024
	}
	if c.MaxBatch == 0 {
		c.MaxBatch = DefaultMaxBatch
	}
	if c.MaxRun == 0 {
		c.MaxRun = command.DefaultMaxRun
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	return nil
}

// ensureCommands creates the command stream if it does not exist, and
// checks that one that does is a work queue; a request that gets no
// answer is made again (see retryLost).
func ensureCommands(ctx context.Context, cfg *BusConfig) (jetstream.Stream, error) {
	sc := jetstream.StreamConfig{
		Name:                 cfg.Stream,
		Description:          "factum commands, one subject per context, aggregate type and partition",
		Subjects:             []string{cfg.SubjectPrefix + ".>"},
		Retention:            jetstream.WorkQueuePolicy,
		Storage:              jetstream.FileStorage,
		Replicas:             cfg.Replicas,
		Duplicates:           cfg.Duplicates,
		MaxMsgsPerSubject:    int64(cfg.MaxPending),
		Discard:              jetstream.DiscardNew,
		DiscardNewPerSubject: true,
	}
	s, err := retryLost(ctx, func(ctx context.Context) (jetstream.Stream, error) {
		s, err := cfg.JetStream.CreateStream(ctx, sc)
		if errors.Is(err, jetstream.ErrStreamNameAlreadyInUse) {
			s, err = cfg.JetStream.Stream(ctx, cfg.Stream)
		}
		return s, err
	})
	if err == nil && s.CachedInfo().Config.Retention != jetstream.WorkQueuePolicy {
		return nil, factum.IllegalArgument(fmt.Sprintf("nats: stream %s exists and is not a work queue", cfg.Stream))
	}
	if err != nil {
		return nil, fmt.Errorf("nats: command stream %s: %w", cfg.Stream, err)
	}
	return s, nil
}
