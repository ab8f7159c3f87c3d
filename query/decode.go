package query

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
)

// Ceilings of a condition decoded from JSON, whatever a Planner's Limits
// later allow. They are checked while decoding, before the tree is built
// any further, so an oversized or deeply nested condition costs the
// decoder no more than reading up to the ceiling.
const (
	// MaxDecodeDepth bounds the nesting of a decoded condition: the
	// top-level condition is at depth 1, its children at 2.
	MaxDecodeDepth = 32
	// MaxDecodeNodes bounds the number of condition nodes decoded, every
	// child counted.
	MaxDecodeNodes = 10_000
)

// UnmarshalJSON decodes the JSON form of a condition:
//
//	{"field": "state.qty", "operator": "GT", "value": 3,
//	 "children": [...], "options": {"ignoreCase": true, "zoneId": "UTC"}}
//
// Every member is optional; unknown members are refused, so a misspelt
// member is an error instead of a silently wider query. The operator is
// matched ignoring case and stored in upper case; values are normalised as
// Normalize does, and integers beyond ±2^53 are kept as json.Number so
// that planning refuses them instead of rounding them.
//
// The whole tree is decoded in one pass over data, in time and memory
// linear in its size: children are read by the same decoder, never handed
// to a decoder of their own. A tree nested deeper than MaxDecodeDepth or
// holding more than MaxDecodeNodes nodes is refused with an IllegalArgument
// error as soon as the decoder reaches the ceiling.
func (c *Condition) UnmarshalJSON(data []byte) error {
	if err := checkNesting(data); err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	dec.DisallowUnknownFields() // for Options
	d := conditionDecoder{dec: dec}
	got, err := d.condition(1)
	if err != nil {
		return err
	}
	if _, err := dec.Token(); err != io.EOF {
		return errors.New("data after the JSON value")
	}
	*c = got
	return nil
}

// conditionDecoder reads a condition tree from one token stream.
type conditionDecoder struct {
	dec   *json.Decoder
	nodes int
}

// condition reads one condition (an object, or null for the zero
// condition) at depth.
func (d *conditionDecoder) condition(depth int) (Condition, error) {
	var c Condition
	tok, err := d.dec.Token()
	if err != nil {
		return c, err
	}
	if tok == nil {
		return c, d.count(depth)
	}
	if tok != json.Delim('{') {
		return c, fmt.Errorf("cannot unmarshal %s into a condition (want an object)", tokenKind(tok))
	}
	if err := d.count(depth); err != nil {
		return c, err
	}
	for d.dec.More() {
		tok, err := d.dec.Token()
		if err != nil {
			return c, err
		}
		key, _ := tok.(string)
		switch strings.ToLower(key) {
		case "field":
			err = d.dec.Decode(&c.Field)
		case "operator":
			var s string
			if err = d.dec.Decode(&s); err == nil && s != "" {
				c.Operator, err = ParseOperator(s)
			}
		case "value":
			var v any
			if err = d.dec.Decode(&v); err == nil {
				c.Value = Normalize(v)
			}
		case "children":
			if c.Children, err = d.children(depth); err != nil {
				return c, err // a child's error says where it is
			}
		case "options":
			err = d.dec.Decode(&c.Options)
		default:
			return c, fmt.Errorf("unknown field %q", key)
		}
		if err != nil {
			return c, fmt.Errorf("condition %s: %w", key, err)
		}
	}
	_, err = d.dec.Token() // the closing '}'
	return c, err
}

// children reads the children array (or null) of a condition at depth.
func (d *conditionDecoder) children(depth int) ([]Condition, error) {
	tok, err := d.dec.Token()
	if err != nil || tok == nil {
		return nil, err
	}
	if tok != json.Delim('[') {
		return nil, fmt.Errorf("cannot unmarshal %s into children (want an array)", tokenKind(tok))
	}
	var out []Condition
	for d.dec.More() {
		c, err := d.condition(depth + 1)
		if err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	_, err = d.dec.Token() // the closing ']'
	return out, err
}

// count records one node at depth and refuses it beyond the ceilings.
func (d *conditionDecoder) count(depth int) error {
	if depth > MaxDecodeDepth {
		return illegal(fmt.Sprintf("condition is nested deeper than %d levels", MaxDecodeDepth))
	}
	d.nodes++
	if d.nodes > MaxDecodeNodes {
		return illegal(fmt.Sprintf("condition has more than %d nodes", MaxDecodeNodes))
	}
	return nil
}

// maxJSONNesting bounds the bracket nesting of a query's JSON: a condition
// takes two levels per depth (its object and its children array), and the
// query, a value array and options one each.
const maxJSONNesting = 2*MaxDecodeDepth + 4

// checkNesting refuses, in one pass that stops at the first bracket too
// deep, JSON nested deeper than any query within the ceilings can be. It
// runs before encoding/json, which would otherwise scan (and buffer) the
// whole of a deeply nested body before the condition decoder is reached.
func checkNesting(data []byte) error {
	depth, inString := 0, false
	for i := 0; i < len(data); i++ {
		switch c := data[i]; {
		case inString && c == '\\':
			i++
		case c == '"':
			inString = !inString
		case inString:
		case c == '{' || c == '[':
			if depth++; depth > maxJSONNesting {
				return illegal(fmt.Sprintf("query JSON is nested deeper than %d levels (a condition may nest %d levels deep)", maxJSONNesting, MaxDecodeDepth))
			}
		case c == '}' || c == ']':
			depth--
		}
	}
	return nil
}

// tokenKind names a JSON token for an error message.
func tokenKind(tok json.Token) string {
	switch t := tok.(type) {
	case json.Delim:
		if t == '[' {
			return "array"
		}
		return "object"
	case string:
		return "string"
	case json.Number, float64:
		return "number"
	case bool:
		return "bool"
	}
	return "value"
}
