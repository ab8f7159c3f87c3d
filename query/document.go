package query

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
)

// Document is a JSON object as encoding/json decodes it into any: nested
// objects are map[string]any (or Document), arrays []any, numbers float64
// or json.Number, and strings, bools and nil as themselves. Evaluators
// also accept Go integer and float types for numbers.
type Document map[string]any

// Lookup returns the value at the dotted path and whether it is present.
// A path never indexes into an array.
func (d Document) Lookup(path string) (any, bool) {
	return lookup(map[string]any(d), SplitPath(path))
}

// ParseDocument decodes a JSON object into a Document. With exactNumbers,
// numbers are kept as json.Number, so that re-encoding reproduces them
// digit for digit; otherwise they are float64, which evaluates faster.
func ParseDocument(data []byte, exactNumbers bool) (Document, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	if exactNumbers {
		dec.UseNumber()
	}
	var d Document
	if err := dec.Decode(&d); err != nil {
		return nil, fmt.Errorf("query: decode document: %w", err)
	}
	if d == nil {
		return nil, illegal("document is not a JSON object")
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, illegal("document has data after its JSON object")
	}
	return d, nil
}

// Clone returns a deep copy of d: changing the copy never changes d.
func (d Document) Clone() Document {
	if d == nil {
		return nil
	}
	return Document(cloneValue(map[string]any(d)).(map[string]any))
}

func cloneValue(v any) any {
	switch x := v.(type) {
	case map[string]any:
		m := make(map[string]any, len(x))
		for k, e := range x {
			m[k] = cloneValue(e)
		}
		return m
	case Document:
		return cloneValue(map[string]any(x))
	case []any:
		s := make([]any, len(x))
		for i, e := range x {
			s[i] = cloneValue(e)
		}
		return s
	}
	return v
}
