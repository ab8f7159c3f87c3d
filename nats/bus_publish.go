package nats

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/factum-go/factum"
	natsgo "github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// traceHeaders are the trace-context keys of a command's header that the
// message repeats as NATS headers, for tools that trace NATS traffic.
var traceHeaders = [...]string{"traceparent", "tracestate", "baggage"}

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
	if st := b.nc.Status(); st != natsgo.CONNECTED {
		return 0, b.unavailable(cmd, n, "", "NATS is unreachable (connection "+st.String()+")", nil)
	}
	owner, alive := b.parts.Owner(n)
	if owned {
		owner, alive = b.parts.Instance(), true
	}
	if owner != "" && !alive {
		return 0, b.unavailable(cmd, n, owner, "the partition's owner "+owner+" is unreachable (no announcement within a lease); another instance takes the partition over within a lease", nil)
	}
	msg, err := encodeCommand(b.cfg.SubjectPrefix, cmd, n)
	if err != nil {
		return 0, err
	}
	if err := ctx.Err(); err != nil {
		return 0, factum.Errorf(factum.CodeTooManyRequests, "nats: the sender gave up before the command was sent: %w", err).
			With(cmd.AggregateID, 0, cmd.ID, cmd.RequestIDOrID())
	}
	// Once the message is on its way, the answer is awaited past ctx's
	// end (up to PublishTimeout): a send that fails must mean that the
	// command was not accepted, and only JetStream's answer tells.
	pctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), b.cfg.PublishTimeout)
	defer cancel()
	ack, err := b.js.PublishMsg(pctx, msg, jetstream.WithMsgID(cmd.ID), jetstream.WithExpectStream(b.cfg.Stream))
	if err == nil {
		return ack.Sequence, nil
	}
	var apiErr *jetstream.APIError
	switch {
	case errors.As(err, &apiErr) && strings.Contains(apiErr.Description, "maximum messages"):
		// The partition's subject holds MaxPending commands: back-pressure.
		return 0, factum.Errorf(factum.CodeTooManyRequests, "nats: the partition's commands are at their bound; retry later: %w", err).
			With(cmd.AggregateID, 0, cmd.ID, cmd.RequestIDOrID())
	case errors.As(err, &apiErr) && apiErr.Code == 503:
		return 0, b.unavailable(cmd, n, owner, "JetStream could not store the command", err)
	case errors.As(err, &apiErr):
		return 0, factum.Errorf(factum.CodeIllegalState, "nats: the command stream refused the command: %w", err).
			With(cmd.AggregateID, 0, cmd.ID, cmd.RequestIDOrID())
	default:
		return 0, b.unavailable(cmd, n, owner, "no acknowledgement from JetStream (the command may be stored: send it again with the same command ID, which JetStream de-duplicates)", err)
	}
}

// encodeCommand makes the message of a command: its JSON as the body, the
// identities as headers.
func encodeCommand(prefix string, cmd *factum.Command, n int) (*natsgo.Msg, error) {
	data, err := json.Marshal(cmd)
	if err != nil {
		return nil, factum.Errorf(factum.CodeIllegalArgument, "nats: command %s does not encode: %w", cmd.ID, err)
	}
	h := natsgo.Header{}
	h.Set(HeaderCommandID, cmd.ID)
	h.Set(HeaderRequestID, cmd.RequestIDOrID())
	h.Set(HeaderCommandName, cmd.Name)
	h.Set(HeaderTenant, cmd.AggregateID.TenantOrDefault())
	h.Set(HeaderAggregateID, cmd.AggregateID.ID)
	h.Set(HeaderOrigin, cmd.Header[HeaderOrigin])
	for _, k := range traceHeaders {
		if v := cmd.Header[k]; v != "" {
			h.Set(k, v)
		}
	}
	return &natsgo.Msg{Subject: CommandSubject(prefix, cmd.AggregateID.NamedAggregate, n), Header: h, Data: data}, nil
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
