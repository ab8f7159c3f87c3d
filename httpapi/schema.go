package httpapi

import (
	"encoding"
	"encoding/json"
	"reflect"
	"strings"
	"time"
)

// Schema is a JSON Schema (draft 2020-12, the dialect of OpenAPI 3.1) as a
// JSON object.
type Schema map[string]any

// Schemas derives JSON Schemas from Go types by reflection, following
// encoding/json's rules: field names and omission from `json` tags,
// embedded structs flattened, pointers nullable, time.Time a date-time
// string, []byte base64, json.RawMessage anything. Named struct types
// become shared definitions referenced with $ref, which also covers
// recursive types. It is used once, to build the OpenAPI document; it is
// not safe for concurrent use.
type Schemas struct {
	// Defs are the shared definitions by name.
	Defs map[string]Schema
	// RefPrefix is put before a definition's name in a $ref, such as
	// "#/components/schemas/".
	RefPrefix string
	names     map[reflect.Type]string
}

// NewSchemas returns an empty set whose references start with refPrefix.
func NewSchemas(refPrefix string) *Schemas {
	return &Schemas{Defs: map[string]Schema{}, RefPrefix: refPrefix, names: map[reflect.Type]string{}}
}

var (
	timeType         = reflect.TypeFor[time.Time]()
	durationType     = reflect.TypeFor[time.Duration]()
	rawMessageType   = reflect.TypeFor[json.RawMessage]()
	jsonMarshaler    = reflect.TypeFor[json.Marshaler]()
	textMarshaler    = reflect.TypeFor[encoding.TextMarshaler]()
	byteSliceElemTyp = reflect.TypeFor[byte]()
)

// Define adds t as the definition name (a message name, say) and returns a
// reference to it. Defining one type under two names gives two equal
// definitions.
func (s *Schemas) Define(name string, t reflect.Type) Schema {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if _, ok := s.Defs[name]; !ok {
		s.Defs[name] = Schema{} // reserve first: t may refer to itself
		if _, named := s.names[t]; !named && t.Kind() == reflect.Struct {
			s.names[t] = name
		}
		s.Defs[name] = s.inline(t)
	}
	return s.ref(name)
}

// For returns the schema of t: a reference for named struct types, an
// inline schema for everything else.
func (s *Schemas) For(t reflect.Type) Schema {
	switch {
	case t == timeType:
		return Schema{"type": "string", "format": "date-time"}
	case t == durationType:
		return Schema{"type": "integer", "description": "nanoseconds"}
	case t == rawMessageType:
		return Schema{}
	case t.Kind() == reflect.Pointer:
		inner := s.For(t.Elem())
		return Schema{"anyOf": []any{inner, Schema{"type": "null"}}}
	case t.Implements(jsonMarshaler) || reflect.PointerTo(t).Implements(jsonMarshaler):
		// Its JSON shape is whatever MarshalJSON writes.
		return Schema{}
	case t.Implements(textMarshaler) || reflect.PointerTo(t).Implements(textMarshaler):
		return Schema{"type": "string"}
	case t.Kind() == reflect.Struct && t.Name() != "":
		name, ok := s.names[t]
		if !ok {
			name = defName(t)
			for _, taken := s.Defs[name]; taken; _, taken = s.Defs[name] {
				name += "_"
			}
			s.names[t] = name
			s.Defs[name] = Schema{}
			s.Defs[name] = s.inline(t)
		}
		return s.ref(name)
	}
	return s.inline(t)
}

func (s *Schemas) ref(name string) Schema { return Schema{"$ref": s.RefPrefix + name} }

// defName names a definition after its Go type: package.Type.
func defName(t reflect.Type) string {
	pkg := t.PkgPath()
	if i := strings.LastIndexByte(pkg, '/'); i >= 0 {
		pkg = pkg[i+1:]
	}
	name := t.Name()
	// Instantiated generic types carry brackets and paths in their name.
	name = strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '_', r == '.', r == '-':
			return r
		}
		return '_'
	}, name)
	if pkg == "" {
		return name
	}
	return pkg + "." + name
}

// inline returns t's schema without making t itself a definition.
func (s *Schemas) inline(t reflect.Type) Schema {
	switch t.Kind() {
	case reflect.Bool:
		return Schema{"type": "boolean"}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return Schema{"type": "integer"}
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return Schema{"type": "integer", "minimum": 0}
	case reflect.Float32, reflect.Float64:
		return Schema{"type": "number"}
	case reflect.String:
		return Schema{"type": "string"}
	case reflect.Slice:
		if t.Elem() == byteSliceElemTyp {
			return Schema{"type": "string", "contentEncoding": "base64"}
		}
		// encoding/json writes a nil slice as null.
		return Schema{"type": []any{"array", "null"}, "items": s.For(t.Elem())}
	case reflect.Array:
		return Schema{"type": "array", "items": s.For(t.Elem()), "minItems": t.Len(), "maxItems": t.Len()}
	case reflect.Map:
		switch t.Key().Kind() {
		case reflect.String, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
			reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
			return Schema{"type": []any{"object", "null"}, "additionalProperties": s.For(t.Elem())}
		}
		return Schema{"description": "not representable in JSON: map key " + t.Key().String()}
	case reflect.Struct:
		return s.object(t)
	case reflect.Pointer:
		return s.For(t)
	case reflect.Interface:
		return Schema{}
	}
	// Channels, functions and complex numbers do not encode.
	return Schema{"description": "not representable in JSON: " + t.String()}
}

// object builds the schema of a struct's fields as encoding/json writes
// them, embedded structs' fields included.
func (s *Schemas) object(t reflect.Type) Schema {
	props := Schema{}
	var required []any
	s.fields(t, props, &required, map[reflect.Type]bool{})
	out := Schema{"type": "object", "properties": props}
	if len(required) > 0 {
		out["required"] = required
	}
	return out
}

func (s *Schemas) fields(t reflect.Type, props Schema, required *[]any, seen map[reflect.Type]bool) {
	if seen[t] {
		return
	}
	seen[t] = true
	for i := range t.NumField() {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		ft := f.Type
		if f.Anonymous && name == "" {
			et := ft
			if et.Kind() == reflect.Pointer {
				et = et.Elem()
			}
			if et.Kind() == reflect.Struct {
				s.fields(et, props, required, seen)
				continue
			}
		}
		if !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		var fs Schema
		if hasOpt(opts, "string") {
			fs = Schema{"type": "string"}
		} else {
			fs = s.For(ft)
		}
		props[name] = fs
		if !hasOpt(opts, "omitempty") && !hasOpt(opts, "omitzero") && ft.Kind() != reflect.Pointer {
			*required = append(*required, name)
		}
	}
}

func hasOpt(opts, want string) bool {
	for o := range strings.SplitSeq(opts, ",") {
		if o == want {
			return true
		}
	}
	return false
}
