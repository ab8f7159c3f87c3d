package httpapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"reflect"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/aggregate"
)

// unknownFieldsPolicy is implemented by aggregate definitions
// (aggregate.AllowUnknownFields); a type without it is strict.
type unknownFieldsPolicy interface{ AllowsUnknownFields() bool }

// allowsUnknownFields reports whether t's command bodies may carry fields
// their command types do not have.
func allowsUnknownFields(t aggregate.Type) bool {
	p, ok := t.(unknownFieldsPolicy)
	return ok && p.AllowsUnknownFields()
}

// decodeStrict decodes a command body of the current revision into a value
// of typ, refusing fields typ does not have with a BadRequest naming the
// field, and anything after the JSON value. The codec's decoder
// (json.Unmarshal) is what lenient aggregates get; this is the same
// decoding with unknown fields refused.
func decodeStrict(name string, typ reflect.Type, body []byte) (any, error) {
	v := reflect.New(typ)
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v.Interface()); err != nil {
		return nil, factum.Errorf(factum.CodeBadRequest, "command %s body: %w", name, err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, factum.Errorf(factum.CodeBadRequest, "command %s body: data after the JSON value", name)
	}
	return v.Elem().Interface(), nil
}

// decodeCommand decodes a command body: strictly unless the aggregate
// allows unknown fields, through the codec (and its upcasters) otherwise.
func (h *Handler) decodeCommand(info commandInfo, body []byte) (any, error) {
	if info.strict {
		return decodeStrict(info.spec.Name, info.spec.Type, body)
	}
	v, err := h.codec.Decode(info.spec.Name, info.revision, body)
	if err != nil {
		return nil, factum.Errorf(factum.CodeBadRequest, "command %s body: %w", info.spec.Name, err)
	}
	return v, nil
}
