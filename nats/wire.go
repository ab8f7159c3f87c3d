package nats

import (
	"fmt"
	"time"
	"unicode/utf8"

	"github.com/factum-go/factum"
	"google.golang.org/protobuf/encoding/protowire"
)

// WireVersion is the first byte of the body of a batch message (see
// HeaderBatch) and of a message of several signals (see HeaderSignals):
// the version of the binary encoding the rest of the body follows, a
// sequence of protobuf wire-format fields (docs/scale-out.md lists them).
// Only factum instances write and read these bodies, so the encoding is
// theirs to choose: a JSON body begins with '[' or a space, never with
// this byte, and a reader refuses a body that does not begin with it,
// saying so, rather than guess at what it holds; it refuses a field it
// does not know too, so a change to the fields is a new version. A
// message of one command or of one signal is JSON, whatever its writer.
const WireVersion byte = 0xF1

// wireError is the cause of every error of a batch body that does not
// decode: what is wrong, and where.
type wireError struct {
	off    int // the offset in the body of the field at fault
	reason string
}

func (e *wireError) Error() string {
	return fmt.Sprintf("binary batch body, byte %d: %s", e.off, e.reason)
}

// wireReader walks the fields of one message of a body, keeping the
// offset of each in the whole body for its errors.
type wireReader struct {
	b    []byte
	base int // the offset of b[0] in the body
}

// wireField is one field of a message: a varint's value or a
// length-delimited field's bytes (the only wire types the encoding uses).
type wireField struct {
	num protowire.Number
	typ protowire.Type
	u   uint64
	b   []byte
	off int // the offset of its tag in the body
}

// done reports whether r read every field.
func (r *wireReader) done() bool { return len(r.b) == 0 }

// next reads the next field.
func (r *wireReader) next() (wireField, error) {
	f := wireField{off: r.base}
	num, typ, n := protowire.ConsumeTag(r.b)
	if n < 0 {
		return f, r.fail(0, "field tag: %v", protowire.ParseError(n))
	}
	f.num, f.typ = num, typ
	var m int
	switch typ {
	case protowire.VarintType:
		f.u, m = protowire.ConsumeVarint(r.b[n:])
	case protowire.BytesType:
		f.b, m = protowire.ConsumeBytes(r.b[n:])
	default:
		return f, r.fail(0, "field %d has wire type %d, which the encoding does not use", num, typ)
	}
	if m < 0 {
		return f, r.fail(0, "field %d: %v", num, protowire.ParseError(m))
	}
	r.b = r.b[n+m:]
	r.base += n + m
	return f, nil
}

// fail is an error at offset off of what r has left.
func (r *wireReader) fail(off int, format string, args ...any) error {
	return &wireError{off: r.base + off, reason: fmt.Sprintf(format, args...)}
}

// inner returns a reader of the message f holds.
func (f wireField) inner() (wireReader, error) {
	if f.typ != protowire.BytesType {
		return wireReader{}, f.wrongType()
	}
	return wireReader{b: f.b, base: f.off + protowire.SizeTag(f.num) + protowire.SizeVarint(uint64(len(f.b)))}, nil
}

// bytes returns the bytes f holds: the body's, not a copy.
func (f wireField) bytes() ([]byte, error) {
	if f.typ != protowire.BytesType {
		return nil, f.wrongType()
	}
	return f.b, nil
}

// str returns the string f holds, as jsonString makes it, or keep when
// it holds keep's bytes, so that a value the batch repeats is one
// string.
func (f wireField) str(keep string) (string, error) {
	if f.typ != protowire.BytesType {
		return "", f.wrongType()
	}
	if string(f.b) == keep {
		return keep, nil
	}
	return jsonString(f.b), nil
}

// jsonString returns b as the string encoding/json gives for these
// bytes, on either side of a message: each byte that is not part of
// valid UTF-8 replaced by U+FFFD. A message of one command or of one
// signal is JSON, so a string decodes the same from either message.
func jsonString(b []byte) string {
	if utf8.Valid(b) {
		return string(b)
	}
	s := make([]byte, 0, len(b)+8)
	for len(b) > 0 {
		r, n := utf8.DecodeRune(b)
		if r == utf8.RuneError && n == 1 {
			s = utf8.AppendRune(s, utf8.RuneError)
		} else {
			s = append(s, b[:n]...)
		}
		b = b[n:]
	}
	return string(s)
}

// maxHint bounds the members a decoder makes room for ahead, whatever
// the header's count says: a body that does not decode then costs no
// more than its own size, and a larger batch grows as it decodes.
const maxHint = 1024

// varint returns the unsigned integer f holds.
func (f wireField) varint() (uint64, error) {
	if f.typ != protowire.VarintType {
		return 0, f.wrongType()
	}
	return f.u, nil
}

// boolean returns the flag f holds: 0 or 1.
func (f wireField) boolean() (bool, error) {
	if f.typ != protowire.VarintType {
		return false, f.wrongType()
	}
	if f.u > 1 {
		return false, &wireError{off: f.off, reason: fmt.Sprintf("field %d: %d is not a flag", f.num, f.u)}
	}
	return f.u == 1, nil
}

// integer returns the signed integer f holds (zigzag), which must fit an
// int.
func (f wireField) integer() (int, error) {
	if f.typ != protowire.VarintType {
		return 0, f.wrongType()
	}
	v := protowire.DecodeZigZag(f.u)
	if int64(int(v)) != v {
		return 0, &wireError{off: f.off, reason: fmt.Sprintf("field %d: %d does not fit an int", f.num, v)}
	}
	return int(v), nil
}

func (f wireField) wrongType() error {
	return &wireError{off: f.off, reason: fmt.Sprintf("field %d has wire type %d, not the field's", f.num, f.typ)}
}

func (f wireField) unknown(in string) error {
	return &wireError{off: f.off, reason: fmt.Sprintf("%s has no field %d", in, f.num)}
}

// openMessage appends the tag of field num, a message, and room for its
// length; closeMessage, given the offset it returns, writes the length
// of what was appended since. One byte holds the length of a message
// under 128 bytes, the common case; a longer one is moved up to make room.
func openMessage(b []byte, num protowire.Number) ([]byte, int) {
	b = protowire.AppendTag(b, num, protowire.BytesType)
	b = append(b, 0)
	return b, len(b)
}

func closeMessage(b []byte, start int) []byte {
	n := len(b) - start
	if n < 0x80 {
		b[start-1] = byte(n)
		return b
	}
	size := protowire.SizeVarint(uint64(n))
	b = append(b, make([]byte, size-1)...)
	copy(b[start-1+size:], b[start:start+n])
	protowire.AppendVarint(b[start-1:start-1], uint64(n))
	return b
}

func appendString(b []byte, num protowire.Number, s string) []byte {
	b = protowire.AppendTag(b, num, protowire.BytesType)
	return protowire.AppendString(b, s)
}

func appendBytes(b []byte, num protowire.Number, v []byte) []byte {
	b = protowire.AppendTag(b, num, protowire.BytesType)
	return protowire.AppendBytes(b, v)
}

func appendVarint(b []byte, num protowire.Number, v uint64) []byte {
	b = protowire.AppendTag(b, num, protowire.VarintType)
	return protowire.AppendVarint(b, v)
}

func appendInt(b []byte, num protowire.Number, v int) []byte {
	return appendVarint(b, num, protowire.EncodeZigZag(int64(v)))
}

// The fields of an aggregate identity, each written when not empty.
const (
	aggContext   protowire.Number = 1
	aggAggregate protowire.Number = 2
	aggID        protowire.Number = 3
	aggTenant    protowire.Number = 4
)

// appendAggregateID appends field num holding id.
func appendAggregateID(b []byte, num protowire.Number, id factum.AggregateID) []byte {
	b, start := openMessage(b, num)
	for _, s := range [...]struct {
		num protowire.Number
		v   string
	}{{aggContext, id.Context}, {aggAggregate, id.Aggregate}, {aggID, id.ID}, {aggTenant, id.Tenant}} {
		if s.v != "" {
			b = appendString(b, s.num, s.v)
		}
	}
	return closeMessage(b, start)
}

// consumeAggregateID decodes the aggregate identity f holds; a part
// equal to like's is like's string.
func consumeAggregateID(f wireField, like factum.AggregateID) (factum.AggregateID, error) {
	var id factum.AggregateID
	err := consumeFields(f, func(g wireField) (err error) {
		switch g.num {
		case aggContext:
			id.Context, err = g.str(like.Context)
		case aggAggregate:
			id.Aggregate, err = g.str(like.Aggregate)
		case aggID:
			id.ID, err = g.str(like.ID)
		case aggTenant:
			id.Tenant, err = g.str(like.Tenant)
		default:
			err = g.unknown("an aggregate identity")
		}
		return err
	})
	return id, err
}

// consumeFields calls field with each field of the message f holds, in
// order, and stops at the first error, its own or field's.
func consumeFields(f wireField, field func(wireField) error) error {
	r, err := f.inner()
	for err == nil && !r.done() {
		var g wireField
		if g, err = r.next(); err == nil {
			err = field(g)
		}
	}
	return err
}

// appendStrings appends field num holding the list ss: a message of one
// field 1 per string, in order. The encoding writes a list where it is
// not empty, or where an empty one differs from a default.
func appendStrings(b []byte, num protowire.Number, ss []string) []byte {
	b, start := openMessage(b, num)
	for _, s := range ss {
		b = appendString(b, 1, s)
	}
	return closeMessage(b, start)
}

// consumeStrings decodes the list f holds into a, nil when empty (as
// JSON decodes an omitted list); a string equal to like's at its index
// is like's.
func consumeStrings(f wireField, like []string, a *arena[string]) ([]string, error) {
	r, err := f.inner()
	if err != nil {
		return nil, err
	}
	ss := a.open()
	for !r.done() {
		g, err := r.next()
		if err != nil {
			return nil, err
		}
		if g.num != 1 {
			return nil, g.unknown("a list")
		}
		keep := ""
		if len(ss) < len(like) {
			keep = like[len(ss)]
		}
		s, err := g.str(keep)
		if err != nil {
			return nil, err
		}
		ss = a.add(ss, s)
	}
	return a.close(ss), nil
}

// arena holds the slices of a batch's members in shared chunks: decoded
// together and used together, they cost an allocation per chunk rather
// than one each. Every slice it returns has its length as its capacity,
// so that an append to one never writes into another's.
type arena[T any] struct {
	chunk []T
	size  int // a chunk's capacity; a larger slice has its own
}

// open starts a slice, which add extends and close ends.
func (a *arena[T]) open() []T { return a.chunk[len(a.chunk):] }

// add appends v to s, the slice open returned or add last did; it moves
// s to a new chunk when the current one is full.
func (a *arena[T]) add(s []T, v T) []T {
	if len(s) == cap(s) {
		c := make([]T, len(s), max(a.size, 2*len(s)+1))
		copy(c, s)
		s = c
	}
	s = append(s, v)
	a.chunk = s
	return s
}

// close ends s: nil when empty, else s with its capacity cut.
func (a *arena[T]) close(s []T) []T {
	if len(s) == 0 {
		return nil
	}
	return s[:len(s):len(s)]
}

// copy returns a copy of v in a, or, past a quarter of a chunk, of its
// own.
func (a *arena[T]) copy(v []T) []T {
	if len(v) > a.size/4 {
		return append([]T(nil), v...)
	}
	s := a.open()
	if len(v) > cap(s) {
		s = make([]T, 0, a.size)
	}
	s = append(s, v...)
	a.chunk = s
	return a.close(s)
}

// The fields of a time: the seconds since 1970 UTC (zigzag), the
// nanoseconds within the second, and the zone's offset east of UTC in
// seconds (zigzag), each written when not zero.
const (
	timeSeconds protowire.Number = 1
	timeNanos   protowire.Number = 2
	timeOffset  protowire.Number = 3
)

// maxOffset bounds a zone's offset, in seconds (exclusive): a day.
const maxOffset = 24 * 60 * 60

// appendTime appends field num holding t, or nothing for the zero time.
// The instant travels to the nanosecond with its zone's offset; the
// monotonic clock reading and the zone's name do not (as in JSON). An
// offset of a day or more, which no zone has, travels as 0: the instant
// stays.
func appendTime(b []byte, num protowire.Number, t time.Time) []byte {
	if t.IsZero() {
		return b
	}
	_, off := t.Zone()
	if off <= -maxOffset || off >= maxOffset {
		off = 0
	}
	b, start := openMessage(b, num)
	if s := t.Unix(); s != 0 {
		b = appendVarint(b, timeSeconds, protowire.EncodeZigZag(s))
	}
	if ns := t.Nanosecond(); ns != 0 {
		b = appendVarint(b, timeNanos, uint64(ns))
	}
	if off != 0 {
		b = appendVarint(b, timeOffset, protowire.EncodeZigZag(int64(off)))
	}
	return closeMessage(b, start)
}

// consumeTime decodes the time f holds, located as encoding/json locates
// the times it decodes: in UTC for an offset of 0, in time.Local when its
// offset at that instant is the time's, else in a fixed zone of the
// offset, with no name. Its instant is the encoded one to the nanosecond
// (time.Time.Equal holds).
func consumeTime(f wireField) (time.Time, error) {
	r, err := f.inner()
	if err != nil {
		return time.Time{}, err
	}
	var sec, nsec, off int64
	for !r.done() {
		g, err := r.next()
		if err != nil {
			return time.Time{}, err
		}
		u, err := g.varint()
		if err != nil {
			return time.Time{}, err
		}
		switch g.num {
		case timeSeconds:
			sec = protowire.DecodeZigZag(u)
		case timeNanos:
			if u >= 1e9 {
				return time.Time{}, &wireError{off: g.off, reason: fmt.Sprintf("%d nanoseconds in a second", u)}
			}
			nsec = int64(u)
		case timeOffset:
			off = protowire.DecodeZigZag(u)
			if off <= -maxOffset || off >= maxOffset {
				return time.Time{}, &wireError{off: g.off, reason: fmt.Sprintf("zone offset %ds is a day or more", off)}
			}
		default:
			return time.Time{}, g.unknown("a time")
		}
	}
	return located(sec, nsec, int(off), time.Local), nil
}

// located is the time sec and nsec after 1970 UTC of zone offset off,
// with local as time.Local (see consumeTime).
func located(sec, nsec int64, off int, local *time.Location) time.Time {
	t := time.Unix(sec, nsec)
	if off == 0 {
		return t.UTC()
	}
	t = t.In(local)
	if _, o := t.Zone(); o == off {
		return t
	}
	return t.In(time.FixedZone("", off))
}

// checkVersion checks that body begins with WireVersion and returns the
// rest.
func checkVersion(body []byte) ([]byte, error) {
	switch {
	case len(body) == 0:
		return nil, &wireError{reason: "empty"}
	case body[0] == WireVersion:
		return body[1:], nil
	case body[0] == '[' || body[0] == ' ' || body[0] == '\t' || body[0] == '\r' || body[0] == '\n':
		return nil, &wireError{reason: fmt.Sprintf("a JSON body, not the binary encoding (first byte %#x) this instance reads: its writer runs another factum version", WireVersion)}
	}
	return nil, &wireError{reason: fmt.Sprintf("first byte %#x, not the binary encoding's version %#x", body[0], WireVersion)}
}
