// Package eventsjson encodes a stream's events as the one JSON array the
// SQL event stores keep per row, and decodes it again: the form is written
// with a fixed field order, so loads read it with a direct scan that slices
// each body out without copying, and fall back to encoding/json for
// anything else.
package eventsjson

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"unicode/utf8"

	"github.com/factum-go/factum"
)

// Append appends events to b as a JSON array in the field names of
// factum.DomainEvent. Bodies are copied byte for byte (Validate has checked
// that each is one JSON value), so a stored body reads back exactly as it
// was appended.
func Append(b []byte, events []factum.DomainEvent) ([]byte, error) {
	b = append(b, '[')
	for i, e := range events {
		if !utf8.Valid(e.Body) {
			return nil, factum.IllegalArgument(fmt.Sprintf("event %d (%s): body is not valid UTF-8", i, e.Name))
		}
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"id":`...)
		b = appendString(b, e.ID)
		b = append(b, `,"name":`...)
		b = appendString(b, e.Name)
		if e.Revision != 0 {
			b = append(b, `,"revision":`...)
			b = strconv.AppendInt(b, int64(e.Revision), 10)
		}
		b = append(b, `,"sequence":`...)
		b = strconv.AppendInt(b, int64(e.Sequence), 10)
		if e.IsLast {
			b = append(b, `,"isLast":true`...)
		}
		b = append(b, `,"body":`...)
		b = append(b, e.Body...)
		b = append(b, '}')
	}
	return append(b, ']'), nil
}

// appendString appends s as a JSON string. IDs and names are printable
// ASCII (factum.ValidateID, ValidateName), so only quotes, backslashes and
// control characters need escaping.
func appendString(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '"' || c == '\\':
			b = append(b, '\\', c)
		case c < 0x20:
			b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
		default:
			b = append(b, c)
		}
	}
	return append(b, '"')
}

// Decode decodes a stored events array. Loading an aggregate
// decodes one array per stream, so the arrays this package writes
// (Append: fixed field order, IDs and names without escapes) are
// read by a direct scan that slices each body out of b without copying;
// anything else falls back to encoding/json. b must not be modified
// afterwards.
func Decode(b []byte) ([]factum.DomainEvent, error) {
	if events, ok := scan(b); ok {
		return events, nil
	}
	var events []factum.DomainEvent
	err := json.Unmarshal(b, &events)
	return events, err
}

// scan is the direct scan; ok is false when b is not in the form
// Append writes.
func scan(b []byte) (events []factum.DomainEvent, ok bool) {
	p := scanner{b: b}
	if !p.lit("[") {
		return nil, false
	}
	events = make([]factum.DomainEvent, 0, bytes.Count(b, []byte(`"sequence":`)))
	for {
		var e factum.DomainEvent
		if !p.lit(`{"id":`) || !p.str(&e.ID) || !p.lit(`,"name":`) || !p.str(&e.Name) {
			return nil, false
		}
		if p.lit(`,"revision":`) && !p.int(&e.Revision) {
			return nil, false
		}
		if !p.lit(`,"sequence":`) || !p.int(&e.Sequence) {
			return nil, false
		}
		e.IsLast = p.lit(`,"isLast":true`)
		if !p.lit(`,"body":`) {
			return nil, false
		}
		start := p.i
		if !p.skipValue() || p.i == start {
			return nil, false // no value at all: not what Append writes
		}
		e.Body = json.RawMessage(b[start:p.i:p.i])
		if !p.lit("}") {
			return nil, false
		}
		events = append(events, e)
		if p.lit("]") {
			return events, p.i == len(b)
		}
		if !p.lit(",") {
			return nil, false
		}
	}
}

type scanner struct {
	b []byte
	i int
}

// lit consumes s if b continues with it.
func (p *scanner) lit(s string) bool {
	if len(p.b)-p.i < len(s) || string(p.b[p.i:p.i+len(s)]) != s {
		return false
	}
	p.i += len(s)
	return true
}

// str consumes a JSON string without escapes, in valid UTF-8: anything
// else is left to encoding/json, which replaces invalid bytes with U+FFFD.
func (p *scanner) str(dst *string) bool {
	if p.i >= len(p.b) || p.b[p.i] != '"' {
		return false
	}
	high := false
	for j := p.i + 1; j < len(p.b); j++ {
		switch c := p.b[j]; {
		case c == '"':
			if high && !utf8.Valid(p.b[p.i+1:j]) {
				return false
			}
			*dst = string(p.b[p.i+1 : j])
			p.i = j + 1
			return true
		case c == '\\' || c < 0x20:
			return false
		case c >= utf8.RuneSelf:
			high = true
		}
	}
	return false
}

// int consumes a non-negative decimal integer in JSON's form: no leading
// zero before another digit.
func (p *scanner) int(dst *int) bool {
	j := p.i
	for j < len(p.b) && p.b[j] >= '0' && p.b[j] <= '9' {
		j++
	}
	if j-p.i > 1 && p.b[p.i] == '0' {
		return false
	}
	n, err := strconv.Atoi(string(p.b[p.i:j]))
	if err != nil {
		return false
	}
	*dst, p.i = n, j
	return true
}

// skipValue consumes one JSON value, which the writer has validated: it
// only tracks strings and nesting to find where the value ends.
func (p *scanner) skipValue() bool {
	depth := 0
	for p.i < len(p.b) {
		switch c := p.b[p.i]; c {
		case '"':
			p.i++
			for p.i < len(p.b) && p.b[p.i] != '"' {
				if p.b[p.i] == '\\' {
					p.i++
				}
				p.i++
			}
			if p.i >= len(p.b) {
				return false
			}
			p.i++
		case '{', '[':
			depth++
			p.i++
		case '}', ']':
			if depth == 0 {
				return true // the end of the enclosing event
			}
			depth--
			p.i++
		case ',':
			if depth == 0 {
				return true
			}
			p.i++
		default:
			p.i++
		}
		if depth == 0 && p.i < len(p.b) && (p.b[p.i] == '}' || p.b[p.i] == ',') {
			return true
		}
	}
	return false
}
