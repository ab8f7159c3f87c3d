package nats

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/factum-go/factum"
	natsgo "github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// traceHeaders are the trace-context keys of a command's header that the
// message repeats as NATS headers, for tools that trace NATS traffic, each
// with its key in the message (canonical, as natsgo.Header.Set makes it).
var traceHeaders = [...]struct{ key, header string }{
	{"traceparent", "Traceparent"}, {"tracestate", "Tracestate"}, {"baggage", "Baggage"},
}

// publish sends cmd to its partition's owner through JetStream and returns
// once JetStream stored it. An error means the command was not stored,
// except an UnavailableError after no answer came within PublishTimeout:
// then it may be, and sending it again with the same command ID stores it
// at most once.
func (b *Bus) publish(ctx context.Context, cmd *factum.Command, n int) error {
	_, err := b.publishSeq(ctx, cmd, n, false)
	return err
}

// publishSeq is publish, returning the stream sequence JetStream stored
// the command at; owned skips the look at the partition's owner (this
// instance, whose claim the watched view may not show yet).
func (b *Bus) publishSeq(ctx context.Context, cmd *factum.Command, n int, owned bool) (uint64, error) {
	owner, err := b.reachable(cmd, n, owned)
	if err != nil {
		return 0, err
	}
	msg, err := encodeCommand(b.cfg.SubjectPrefix, cmd, n)
	if err != nil {
		return 0, err
	}
	return b.store(ctx, cmd, n, owner, msg)
}

// store publishes msg, cmd's message, and returns the stream sequence
// JetStream stored it at; owner names the partition's owner in an
// UnavailableError.
func (b *Bus) store(ctx context.Context, cmd *factum.Command, n int, owner string, msg *natsgo.Msg) (uint64, error) {
	if err := ctx.Err(); err != nil {
		return 0, gaveUp(cmd, err)
	}
	seq, err := b.put(ctx, msg)
	if err != nil {
		return 0, b.refused(cmd, n, owner, err, false)
	}
	return seq, nil
}

// gaveUp is the error of a send whose ctx ended before its message was on
// its way: the command was not sent.
func gaveUp(cmd *factum.Command, err error) *factum.Error {
	return factum.Errorf(factum.CodeTooManyRequests, "nats: the sender gave up before the command was sent: %w", err).
		With(cmd.AggregateID, 0, cmd.ID, cmd.RequestIDOrID())
}

// put publishes msg and returns the stream sequence JetStream stored it
// at, or the publish's error as JetStream's client returned it.
func (b *Bus) put(ctx context.Context, msg *natsgo.Msg) (uint64, error) {
	// Once the message is on its way, the answer is awaited past ctx's
	// end (up to PublishTimeout): a send that fails must mean that the
	// command was not accepted, and only JetStream's answer tells.
	pctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), b.cfg.PublishTimeout)
	defer cancel()
	// The headers PublishMsg's WithExpectStream would set, without its
	// options' allocations; the message ID is encodeCommand's.
	msg.Header[jetstream.ExpectedStreamHeader] = []string{b.cfg.Stream}
	ack, err := b.js.PublishMsg(pctx, msg)
	if err != nil {
		return 0, err
	}
	return ack.Sequence, nil
}

// refused is the error of cmd, whose message (a batch's when batch is
// set) JetStream did not store: err is the publish's. An error means the
// command was not stored, except an UnavailableError after no answer: it
// may be.
func (b *Bus) refused(cmd *factum.Command, n int, owner string, err error, batch bool) *factum.Error {
	var apiErr *jetstream.APIError
	switch {
	case errors.As(err, &apiErr) && strings.Contains(apiErr.Description, "maximum messages"):
		// The partition's subject holds MaxPending messages: back-pressure.
		return factum.Errorf(factum.CodeTooManyRequests, "nats: the partition's commands are at their bound; retry later: %w", err).
			With(cmd.AggregateID, 0, cmd.ID, cmd.RequestIDOrID())
	case errors.As(err, &apiErr) && apiErr.Code == 503:
		return b.unavailable(cmd, n, owner, "JetStream could not store the command", err)
	case errors.As(err, &apiErr):
		return factum.Errorf(factum.CodeIllegalState, "nats: the command stream refused the command: %w", err).
			With(cmd.AggregateID, 0, cmd.ID, cmd.RequestIDOrID())
	case batch:
		return b.unavailable(cmd, n, owner, "no acknowledgement from JetStream (the command may be stored, in a batch of its aggregate's commands: send it again with the same request ID; the owner processes a command stored twice once, finding it by its request ID in the event store)", err)
	default:
		return b.unavailable(cmd, n, owner, "no acknowledgement from JetStream (the command may be stored: send it again with the same command ID, which JetStream de-duplicates)", err)
	}
}

// encodeCommand makes the message of a command: its JSON as the body, the
// identities as headers, the command ID as Nats-Msg-Id (JetStream's
// de-duplication).
func encodeCommand(prefix string, cmd *factum.Command, n int) (*natsgo.Msg, error) {
	data, err := marshalCommand(cmd)
	if err != nil {
		return nil, err
	}
	return commandMsg(prefix, cmd, data, n), nil
}

// marshalCommand returns the JSON of a command, its message's body.
func marshalCommand(cmd *factum.Command) ([]byte, error) {
	data, err := json.Marshal(cmd)
	if err != nil {
		return nil, factum.Errorf(factum.CodeIllegalArgument, "nats: command %s does not encode: %w", cmd.ID, err)
	}
	return data, nil
}

// marshalBody returns the JSON of cmd's body, which is the value of
// "body" in cmd's JSON, when cmd encodes; else marshalCommand's error, so
// that a command that does not encode fails its send at once, whichever
// message it would travel in. Of a command's other fields only its
// CreateTime can fail to encode (a year past 9999, a zone offset of a day
// or more), which the binary encoding would carry: it is checked here.
func marshalBody(cmd *factum.Command) ([]byte, error) {
	body, err := json.Marshal(cmd.Body)
	if err != nil || !timeEncodes(cmd.CreateTime) {
		_, err := marshalCommand(cmd)
		if err == nil {
			// Unreachable: what fails alone fails in the command.
			err = factum.Errorf(factum.CodeIllegalArgument, "nats: command %s does not encode", cmd.ID)
		}
		return nil, err
	}
	return body, nil
}

// timeEncodes reports whether t has JSON: a year of four digits and a
// zone offset of less than a day (see time.Time.MarshalJSON).
func timeEncodes(t time.Time) bool {
	if y := t.Year(); y < 0 || y > 9999 {
		return false
	}
	_, off := t.Zone()
	return off > -86400 && off < 86400
}

// marshalCommandBody returns what marshalCommand returns for cmd, whose
// body's JSON (marshalBody's) is body, without marshalling the body
// again: encoding/json writes a json.RawMessage as its bytes compacted,
// and body, encoding/json's, is compact already, so the bytes are the
// same.
func marshalCommandBody(cmd *factum.Command, body []byte) ([]byte, error) {
	c := *cmd
	c.Body = json.RawMessage(body)
	return marshalCommand(&c)
}

// commandMsg makes the message of a command whose JSON is data. The
// header's values share one array.
func commandMsg(prefix string, cmd *factum.Command, data []byte, n int) *natsgo.Msg {
	traced := 0
	for _, t := range traceHeaders {
		if cmd.Header[t.key] != "" {
			traced++
		}
	}
	// Sized exactly (the identities, the trace headers present, and the
	// expected stream that store adds): a header of at most eight keys
	// is a map of one group, half the allocation of a larger hint.
	vals := make([]string, 0, 7+traced)
	h := make(natsgo.Header, 8+traced)
	set := func(k, v string) {
		vals = append(vals, v)
		h[k] = vals[len(vals)-1 : len(vals) : len(vals)]
	}
	set(jetstream.MsgIDHeader, cmd.ID)
	set(HeaderCommandID, cmd.ID)
	set(HeaderRequestID, cmd.RequestIDOrID())
	set(HeaderCommandName, cmd.Name)
	set(HeaderTenant, cmd.AggregateID.TenantOrDefault())
	set(HeaderAggregateID, cmd.AggregateID.ID)
	set(HeaderOrigin, cmd.Header[HeaderOrigin])
	for _, t := range traceHeaders {
		if v := cmd.Header[t.key]; v != "" {
			set(t.header, v)
		}
	}
	return &natsgo.Msg{Subject: CommandSubject(prefix, cmd.AggregateID.NamedAggregate, n), Header: h, Data: data}
}

// wireCommand decodes a command with its body as raw JSON, which the
// executor decodes into the command's type.
type wireCommand struct {
	factum.Command
	Body json.RawMessage `json:"body"`
}

func decodeCommand(data []byte) (*factum.Command, error) {
	var w wireCommand
	if err := json.Unmarshal(data, &w); err != nil {
		return nil, fmt.Errorf("nats: command message does not decode: %w", err)
	}
	c := w.Command
	c.Body = w.Body
	if err := c.Validate(); err != nil {
		return nil, fmt.Errorf("nats: command message: %w", err)
	}
	return &c, nil
}
