package sqlite

import (
	"bytes"
	"encoding/json"
	"strconv"

	"github.com/factum-go/factum"
)

// esDecodeEvents decodes a stored events array. Loading an aggregate
// decodes one array per stream, so the arrays this package writes
// (esAppendEvents: fixed field order, IDs and names without escapes) are
// read by a direct scan that slices each body out of b without copying;
// anything else falls back to encoding/json. b must not be modified
// afterwards.
func esDecodeEvents(b []byte) ([]factum.DomainEvent, error) {
	if events, ok := esScanEvents(b); ok {
		return events, nil
	}
	var events []factum.DomainEvent
	err := json.Unmarshal(b, &events)
	return events, err
}

// esScanEvents is the direct scan; ok is false when b is not in the form
// esAppendEvents writes.
func esScanEvents(b []byte) (events []factum.DomainEvent, ok bool) {
	p := esScanner{b: b}
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
		if !p.skipValue() {
			return nil, false
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

type esScanner struct {
	b []byte
	i int
}

// lit consumes s if b continues with it.
func (p *esScanner) lit(s string) bool {
	if len(p.b)-p.i < len(s) || string(p.b[p.i:p.i+len(s)]) != s {
		return false
	}
	p.i += len(s)
	return true
}

// str consumes a JSON string without escapes.
func (p *esScanner) str(dst *string) bool {
	if p.i >= len(p.b) || p.b[p.i] != '"' {
		return false
	}
	for j := p.i + 1; j < len(p.b); j++ {
		switch c := p.b[j]; {
		case c == '"':
			*dst = string(p.b[p.i+1 : j])
			p.i = j + 1
			return true
		case c == '\\' || c < 0x20:
			return false
		}
	}
	return false
}

// int consumes a non-negative decimal integer.
func (p *esScanner) int(dst *int) bool {
	j := p.i
	for j < len(p.b) && p.b[j] >= '0' && p.b[j] <= '9' {
		j++
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
func (p *esScanner) skipValue() bool {
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
