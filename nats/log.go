package nats

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/event"
	natsgo "github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// Defaults of LogConfig.
const (
	// DefaultLogStream is the JetStream stream the global log is published
	// to.
	DefaultLogStream = "FACTUM_LOG"
	// DefaultLogSubjectPrefix starts every subject of the published log.
	DefaultLogSubjectPrefix = "factum.log"
	// DefaultLogDuplicates is the stream's de-duplication window.
	DefaultLogDuplicates = 10 * time.Minute
)

// The headers of a published stream, beside Nats-Msg-Id (the stream ID).
const (
	HeaderTenant      = "Factum-Tenant"
	HeaderAggregateID = "Factum-Aggregate-Id"
	HeaderVersion     = "Factum-Version"
)

// LogConfig configures the publication of a bounded context's global log
// to JetStream. JetStream and Context are required.
type LogConfig struct {
	JetStream jetstream.JetStream
	// Context is the bounded context whose log is published.
	Context string
	// Stream is the JetStream stream; DefaultLogStream if empty. EnsureLog
	// creates it.
	Stream string
	// SubjectPrefix starts the subjects; DefaultLogSubjectPrefix if empty.
	SubjectPrefix string
	// Duplicates is the stream's de-duplication window when EnsureLog
	// creates it; DefaultLogDuplicates if 0.
	Duplicates time.Duration
	// Replicas of the stream when EnsureLog creates it; 1 if 0.
	Replicas int
}

func (c *LogConfig) defaults() error {
	if c.JetStream == nil {
		return factum.IllegalArgument("nats: the log publisher needs JetStream")
	}
	if err := factum.ValidateName("context", c.Context); err != nil {
		return err
	}
	if c.Stream == "" {
		c.Stream = DefaultLogStream
	}
	if c.SubjectPrefix == "" {
		c.SubjectPrefix = DefaultLogSubjectPrefix
	}
	if c.Duplicates == 0 {
		c.Duplicates = DefaultLogDuplicates
	}
	c.Replicas = max(c.Replicas, 1)
	return nil
}

// LogSubject returns the subject a stream of the aggregate type is
// published on: prefix.context.aggregate. Names are snake_case, so they are
// valid subject tokens.
func LogSubject(prefix string, named factum.NamedAggregate) string {
	return prefix + "." + named.Context + "." + named.Aggregate
}

// EnsureLog creates the log's JetStream stream (subjects prefix.>, file
// storage, the de-duplication window of cfg) unless it exists, and returns
// it. An existing stream is left as it is. A request that gets no answer
// is made again, each attempt bounded, until ctx ends.
func EnsureLog(ctx context.Context, cfg LogConfig) (jetstream.Stream, error) {
	if err := cfg.defaults(); err != nil {
		return nil, err
	}
	st, err := retryLost(ctx, func(ctx context.Context) (jetstream.Stream, error) {
		st, err := cfg.JetStream.Stream(ctx, cfg.Stream)
		if err == nil || !errors.Is(err, jetstream.ErrStreamNotFound) {
			return st, err
		}
		st, err = cfg.JetStream.CreateStream(ctx, jetstream.StreamConfig{
			Name: cfg.Stream, Subjects: []string{cfg.SubjectPrefix + ".>"}, Storage: jetstream.FileStorage,
			Duplicates: cfg.Duplicates, Replicas: cfg.Replicas,
			Description: "factum's global log, one message per event stream",
		})
		if errors.Is(err, jetstream.ErrStreamNameAlreadyInUse) {
			st, err = cfg.JetStream.Stream(ctx, cfg.Stream)
		}
		return st, err
	})
	if err != nil {
		return nil, fmt.Errorf("nats: log stream %s: %w", cfg.Stream, err)
	}
	return st, nil
}

// LogPublisher returns an event processor that publishes every stream of
// the context's global log to JetStream, for subscribers outside factum:
// run it as any consumer group (its name is "nats_log"). Each stream is
// one message on LogSubject, its body the stream as JSON (the field names
// of factum.EventStream), its Nats-Msg-Id the stream ID, with the headers
// HeaderTenant, HeaderAggregateID and HeaderVersion. A publication
// returns once JetStream has stored the message, so the consumer's
// checkpoint never passes an unpublished stream; a stream delivered again
// (after a crash, before the checkpoint moved) is dropped by JetStream's
// de-duplication within its window. Subscribers that must never see a
// duplicate beyond that window de-duplicate by stream ID. Its function
// signals EVENT_HANDLED, so a caller waiting for that stage without naming
// a function also waits for the publication.
func LogPublisher(cfg LogConfig) (*event.Processor, error) {
	if err := cfg.defaults(); err != nil {
		return nil, err
	}
	publish := func(ctx context.Context, s *factum.EventStream) error {
		body, err := json.Marshal(s)
		if err != nil {
			return fmt.Errorf("nats: encode stream %s: %w", s.ID, err)
		}
		msg := &natsgo.Msg{
			Subject: LogSubject(cfg.SubjectPrefix, s.AggregateID.NamedAggregate),
			Header:  natsgo.Header{},
			Data:    body,
		}
		msg.Header.Set(jetstream.MsgIDHeader, s.ID)
		msg.Header.Set(HeaderTenant, s.AggregateID.TenantOrDefault())
		msg.Header.Set(HeaderAggregateID, s.AggregateID.ID)
		msg.Header.Set(HeaderVersion, strconv.Itoa(s.Version))
		if _, err := cfg.JetStream.PublishMsg(ctx, msg, jetstream.WithExpectStream(cfg.Stream)); err != nil {
			return fmt.Errorf("nats: publish stream %s: %w", s.ID, err)
		}
		return nil
	}
	return event.NewProcessor(cfg.Context, "nats_log", factum.StageEventHandled, event.OnStream("publish", publish, nil))
}
