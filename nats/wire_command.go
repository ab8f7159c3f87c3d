package nats

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"unicode/utf8"

	"github.com/factum-go/factum"
	"google.golang.org/protobuf/encoding/protowire"
)

// The fields of a batch message's body, after WireVersion: the defaults
// its commands share (those of its first command: a batch is one
// aggregate's, and its commands usually have one name and one header),
// then each command, in order.
const (
	cmdsAggregateID protowire.Number = 1
	cmdsName        protowire.Number = 2
	cmdsHeader      protowire.Number = 3
	cmdsCommand     protowire.Number = 4
)

// The fields of one command. AggregateID, Name and Header are written
// when they differ from the batch's defaults; RequestID when it differs
// from ID (even empty); Body always, as its JSON (the executor decodes it
// into the command's type); the others when not zero. A header is a list
// of its keys and values, alternating.
const (
	cmdID              protowire.Number = 1
	cmdRequestID       protowire.Number = 2
	cmdAggregateID     protowire.Number = 3
	cmdExpectedVersion protowire.Number = 4
	cmdName            protowire.Number = 5
	cmdBody            protowire.Number = 6
	cmdHeader          protowire.Number = 7
	cmdCreateTime      protowire.Number = 8
	cmdIsCreate        protowire.Number = 9
	cmdAllowCreate     protowire.Number = 10
	cmdIsVoid          protowire.Number = 11
	cmdOwnerID         protowire.Number = 12
)

// encodeCommands returns the body of the batch message of batch (see
// HeaderBatch): WireVersion and the binary encoding of its commands.
// Every field JSON carries travels; the body as the JSON each send holds
// of it (see outSend.commandBody), which is the JSON a message of the
// command alone carries.
func encodeCommands(batch []*outSend) []byte {
	// Each send's size bounds its command's bytes: the body is made in
	// one allocation.
	size := 64
	for _, s := range batch {
		size += s.size()
	}
	b := make([]byte, 0, size)
	b = append(b, WireVersion)
	if len(batch) == 0 {
		return b
	}
	def := batch[0].cmd
	if def.AggregateID != (factum.AggregateID{}) {
		b = appendAggregateID(b, cmdsAggregateID, def.AggregateID)
	}
	if def.Name != "" {
		b = appendString(b, cmdsName, def.Name)
	}
	if len(def.Header) > 0 {
		b = appendHeader(b, cmdsHeader, def.Header)
	}
	for _, s := range batch {
		b = appendCommand(b, s.cmd, s.commandBody(), def)
	}
	return b
}

// appendCommand appends the field of c, whose body's JSON is body, a
// command of the batch whose defaults are def's.
func appendCommand(b []byte, c *factum.Command, body []byte, def *factum.Command) []byte {
	b, start := openMessage(b, cmdsCommand)
	if c.ID != "" {
		b = appendString(b, cmdID, c.ID)
	}
	if c.RequestID != c.ID {
		b = appendString(b, cmdRequestID, c.RequestID)
	}
	if c.AggregateID != def.AggregateID {
		b = appendAggregateID(b, cmdAggregateID, c.AggregateID)
	}
	if c.ExpectedVersion != 0 {
		b = appendInt(b, cmdExpectedVersion, c.ExpectedVersion)
	}
	if c.Name != def.Name {
		b = appendString(b, cmdName, c.Name)
	}
	b = appendBytes(b, cmdBody, body)
	if c != def && !maps.Equal(c.Header, def.Header) {
		b = appendHeader(b, cmdHeader, c.Header)
	}
	b = appendTime(b, cmdCreateTime, c.CreateTime)
	for _, f := range [...]struct {
		num protowire.Number
		v   bool
	}{{cmdIsCreate, c.IsCreate}, {cmdAllowCreate, c.AllowCreate}, {cmdIsVoid, c.IsVoid}} {
		if f.v {
			b = appendVarint(b, f.num, 1)
		}
	}
	if c.OwnerID != "" {
		b = appendString(b, cmdOwnerID, c.OwnerID)
	}
	return closeMessage(b, start)
}

// appendHeader appends field num holding h: a list of its keys and
// values, alternating.
func appendHeader(b []byte, num protowire.Number, h map[string]string) []byte {
	b, start := openMessage(b, num)
	for k, v := range h {
		if !utf8.ValidString(k) {
			// Keys that are not UTF-8 decode as in JSON (see jsonString),
			// and two may become one key: JSON writes a map's keys in
			// order and its decoder keeps the last, so they go in that
			// order here, where the decoder keeps the last too.
			b = b[:start]
			for _, k := range slices.Sorted(maps.Keys(h)) {
				b = appendString(b, 1, k)
				b = appendString(b, 1, h[k])
			}
			break
		}
		b = appendString(b, 1, k)
		b = appendString(b, 1, v)
	}
	return closeMessage(b, start)
}

// commandBody returns the JSON of the send's command's body: the JSON
// the send holds of it (marshalBody's), or, without it, the body
// marshalled; "null" for a body without JSON, which no send has (each
// send holds its body's JSON).
func (s *outSend) commandBody() []byte {
	if s.body != nil {
		return s.body
	}
	if body, err := json.Marshal(s.cmd.Body); err == nil {
		return body
	}
	return []byte("null")
}

// decodeCommands decodes a body encodeCommands made, expecting about n
// commands (a hint: the header's count, which makes room for no more
// than maxHint). The commands are what decoding the JSON of each gives
// (see decodeCommand): the body as its JSON, a json.RawMessage; a header
// that was empty nil; strings as jsonString makes them; CreateTime
// located as consumeTime says. It does not validate them. Any other body
// is an error, never a panic.
func decodeCommands(body []byte, n int) ([]*factum.Command, error) {
	rest, err := checkVersion(body)
	if err != nil {
		return nil, err
	}
	n = max(0, min(n, len(rest)/4, maxHint))
	cmds := make([]*factum.Command, 0, n)
	all := make([]factum.Command, 0, n)
	var def factum.Command
	bodies := arena[byte]{size: 2048}
	r := &wireReader{b: rest, base: 1}
	for !r.done() {
		f, err := r.next()
		if err != nil {
			return nil, err
		}
		if f.num != cmdsCommand && len(cmds) > 0 {
			return nil, &wireError{off: f.off, reason: fmt.Sprintf("batch field %d after a command", f.num)}
		}
		switch f.num {
		case cmdsAggregateID:
			def.AggregateID, err = consumeAggregateID(f, factum.AggregateID{})
		case cmdsName:
			def.Name, err = f.str("")
		case cmdsHeader:
			def.Header, err = consumeHeader(f)
		case cmdsCommand:
			// The commands share one array while the hint holds.
			if len(all) == cap(all) {
				all = make([]factum.Command, 0, max(len(all), 2))
			}
			all = append(all, def)
			c := &all[len(all)-1]
			c.Header = maps.Clone(def.Header)
			err = consumeCommand(f, c, &bodies)
			cmds = append(cmds, c)
		default:
			err = f.unknown("a batch of commands")
		}
		if err != nil {
			return nil, err
		}
	}
	return cmds, nil
}

// consumeCommand decodes the command f holds into c, which holds the
// batch's defaults, its body copied into bodies.
func consumeCommand(f wireField, c *factum.Command, bodies *arena[byte]) error {
	r, err := f.inner()
	if err != nil {
		return err
	}
	request, body := false, false
	for !r.done() {
		g, err := r.next()
		if err != nil {
			return err
		}
		switch g.num {
		case cmdID:
			c.ID, err = g.str("")
		case cmdRequestID:
			request = true
			c.RequestID, err = g.str(c.ID)
		case cmdAggregateID:
			c.AggregateID, err = consumeAggregateID(g, c.AggregateID)
		case cmdExpectedVersion:
			c.ExpectedVersion, err = g.integer()
		case cmdName:
			c.Name, err = g.str(c.Name)
		case cmdBody:
			var raw []byte
			if raw, err = g.bytes(); err == nil {
				c.Body = json.RawMessage(bodies.copy(raw))
			}
			body = true
		case cmdHeader:
			c.Header, err = consumeHeader(g)
		case cmdCreateTime:
			c.CreateTime, err = consumeTime(g)
		case cmdIsCreate:
			c.IsCreate, err = g.boolean()
		case cmdAllowCreate:
			c.AllowCreate, err = g.boolean()
		case cmdIsVoid:
			c.IsVoid, err = g.boolean()
		case cmdOwnerID:
			c.OwnerID, err = g.str("")
		default:
			err = g.unknown("a command")
		}
		if err != nil {
			return err
		}
	}
	if !body {
		return &wireError{off: f.off, reason: "a command without a body"}
	}
	if !request {
		c.RequestID = c.ID
	}
	return nil
}

// consumeHeader decodes the header f holds, nil when empty (as JSON
// decodes an omitted header).
func consumeHeader(f wireField) (map[string]string, error) {
	kv, err := consumeStrings(f, nil, &arena[string]{})
	if err != nil {
		return nil, err
	}
	if len(kv)%2 != 0 {
		return nil, &wireError{off: f.off, reason: fmt.Sprintf("a header of %d strings, not pairs", len(kv))}
	}
	if len(kv) == 0 {
		return nil, nil
	}
	h := make(map[string]string, len(kv)/2)
	for i := 0; i < len(kv); i += 2 {
		h[kv[i]] = kv[i+1]
	}
	return h, nil
}
