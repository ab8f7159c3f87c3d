package query

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strings"

	"github.com/factum-go/factum"
)

// decodeStrict decodes one JSON value into v, refusing unknown members and
// trailing data, with numbers as json.Number.
func decodeStrict(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	dec.UseNumber()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if _, err := dec.Token(); err != io.EOF {
		return errors.New("data after the JSON value")
	}
	return nil
}

// ParseCondition decodes the JSON form of a condition. Errors are
// IllegalArgument *factum.Error values.
func ParseCondition(data []byte) (Condition, error) {
	var c Condition
	return c, parse("condition", data, &c)
}

// ParseQuery decodes the JSON form of a list or single query:
//
//	{"condition": {...}, "projection": {"include": [...], "exclude": [...]},
//	 "sort": [{"field": "state.qty", "direction": "DESC"}], "limit": 10}
//
// Errors are IllegalArgument *factum.Error values.
func ParseQuery(data []byte) (Query, error) {
	var q Query
	return q, parse("query", data, &q)
}

// ParsePagedQuery decodes the JSON form of a paged query, which has
// "pagination": {"index": 1, "size": 10} instead of "limit". Errors are
// IllegalArgument *factum.Error values.
func ParsePagedQuery(data []byte) (PagedQuery, error) {
	var q PagedQuery
	return q, parse("paged query", data, &q)
}

func parse(what string, data []byte, v any) error {
	var err error
	if c, ok := v.(*Condition); ok {
		// Straight to the single-pass decoder, without encoding/json's
		// scan of the whole value first: a bomb is refused after reading
		// no more than the ceilings allow.
		err = c.UnmarshalJSON(data)
	} else if err = checkNesting(data); err == nil {
		err = decodeStrict(data, v)
	}
	if err == nil {
		return nil
	}
	var fe *factum.Error
	if errors.As(err, &fe) {
		return fe
	}
	msg := strings.TrimPrefix(err.Error(), "json: ")
	return factum.Errorf(factum.CodeIllegalArgument, "query: invalid %s JSON: %s", what, msg)
}
