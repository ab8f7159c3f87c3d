package httpapi

import (
	"encoding"
	"encoding/json"
	"reflect"
	"strings"
	"time"

	"github.com/getkin/kin-openapi/openapi3"
)

// SchemaRefPrefix is where the definitions of a Schemas live in an OpenAPI
// document.
const SchemaRefPrefix = "#/components/schemas/"

// Schemas derives OpenAPI 3.0 schemas (kin-openapi's typed model) from Go
// types by reflection, following encoding/json's rules: field names and
// omission from `json` tags, embedded structs flattened, pointers and nil
// slices and maps nullable, time.Time a date-time string, []byte base64,
// json.RawMessage and interfaces anything. Named struct types become
// shared definitions referenced with $ref, which also covers recursive
// types. Types whose JSON is custom (a MarshalJSON) take the schema given
// with Override, or else the empty schema. It is used once, to build the
// OpenAPI document; it is not safe for concurrent use.
type Schemas struct {
	// Defs are the shared definitions by name: the document's
	// components.schemas.
	Defs      openapi3.Schemas
	names     map[reflect.Type]string
	overrides map[reflect.Type]*openapi3.SchemaRef
}

// NewSchemas returns an empty set.
func NewSchemas() *Schemas {
	return &Schemas{Defs: openapi3.Schemas{}, names: map[reflect.Type]string{}, overrides: map[reflect.Type]*openapi3.SchemaRef{}}
}

var (
	timeType         = reflect.TypeFor[time.Time]()
	rawMessageType   = reflect.TypeFor[json.RawMessage]()
	jsonMarshaler    = reflect.TypeFor[json.Marshaler]()
	textMarshaler    = reflect.TypeFor[encoding.TextMarshaler]()
	byteSliceElemTyp = reflect.TypeFor[byte]()
)

// Override makes s the schema of t wherever t appears: for types with a
// custom JSON form, and for string types whose values are an enum.
func (s *Schemas) Override(t reflect.Type, sc *openapi3.Schema) {
	s.overrides[t] = openapi3.NewSchemaRef("", sc)
}

// OverrideRef defines sc under name and makes a reference to it the schema
// of t wherever t appears.
func (s *Schemas) OverrideRef(name string, t reflect.Type, sc *openapi3.Schema) *openapi3.SchemaRef {
	s.Defs[name] = openapi3.NewSchemaRef("", sc)
	ref := s.ref(name)
	s.overrides[t] = ref
	return ref
}

// Add defines sc under name and returns a reference to it.
func (s *Schemas) Add(name string, sc *openapi3.Schema) *openapi3.SchemaRef {
	s.Defs[name] = openapi3.NewSchemaRef("", sc)
	return s.ref(name)
}

// Define adds t as the definition name (a message name, say) and returns a
// reference to it. Defining one type under two names gives two equal
// definitions.
func (s *Schemas) Define(name string, t reflect.Type) *openapi3.SchemaRef {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if _, ok := s.Defs[name]; !ok {
		if _, named := s.names[t]; !named && t.Kind() == reflect.Struct {
			s.names[t] = name
		}
		s.fill(name, t)
	}
	return s.ref(name)
}

// fill reserves the definition before building it: t may refer to itself.
func (s *Schemas) fill(name string, t reflect.Type) {
	sc := &openapi3.Schema{}
	s.Defs[name] = openapi3.NewSchemaRef("", sc)
	*sc = *s.inline(t).Value
}

// For returns the schema of t: a reference for named struct types, an
// inline schema for everything else.
func (s *Schemas) For(t reflect.Type) *openapi3.SchemaRef {
	if o, ok := s.overrides[t]; ok {
		return o
	}
	switch {
	case t == timeType:
		return openapi3.NewSchemaRef("", openapi3.NewDateTimeSchema())
	case t == rawMessageType:
		return openapi3.NewSchemaRef("", &openapi3.Schema{})
	case t.Kind() == reflect.Pointer:
		return nullable(s.For(t.Elem()))
	case t.Implements(jsonMarshaler) || reflect.PointerTo(t).Implements(jsonMarshaler):
		// Its JSON shape is whatever MarshalJSON writes.
		return openapi3.NewSchemaRef("", &openapi3.Schema{})
	case t.Implements(textMarshaler) || reflect.PointerTo(t).Implements(textMarshaler):
		return openapi3.NewSchemaRef("", openapi3.NewStringSchema())
	case t.Kind() == reflect.Struct && t.Name() != "":
		name, ok := s.names[t]
		if !ok {
			name = defName(t)
			for _, taken := s.Defs[name]; taken; _, taken = s.Defs[name] {
				name += "_"
			}
			s.names[t] = name
			s.fill(name, t)
		}
		return s.ref(name)
	}
	return s.inline(t)
}

func (s *Schemas) ref(name string) *openapi3.SchemaRef {
	return openapi3.NewSchemaRef(SchemaRefPrefix+name, s.Defs[name].Value)
}

// nullable allows null besides r: a copy with nullable set, or, for a
// reference (whose siblings OpenAPI 3.0 ignores), an allOf around it.
func nullable(r *openapi3.SchemaRef) *openapi3.SchemaRef {
	if r.Ref != "" {
		// nullable needs a type beside it; the referenced schema's own.
		w := &openapi3.Schema{AllOf: openapi3.SchemaRefs{r}, Nullable: true}
		if r.Value != nil && r.Value.Type != nil {
			w.Type = r.Value.Type
		} else {
			w.Type = &openapi3.Types{openapi3.TypeObject}
		}
		return openapi3.NewSchemaRef("", w)
	}
	if r.Value == nil || isEmpty(r.Value) {
		return r // anything already includes null
	}
	c := *r.Value
	c.Nullable = true
	return openapi3.NewSchemaRef("", &c)
}

func isEmpty(s *openapi3.Schema) bool {
	return s.Type == nil && s.AllOf == nil && s.AnyOf == nil && s.OneOf == nil && s.Properties == nil && s.Items == nil && s.Enum == nil
}

// defName names a definition after its Go type: package.Type.
func defName(t reflect.Type) string {
	pkg := t.PkgPath()
	if i := strings.LastIndexByte(pkg, '/'); i >= 0 {
		pkg = pkg[i+1:]
	}
	// Instantiated generic types carry brackets and paths in their name.
	name := componentName(t.Name())
	if pkg == "" {
		return name
	}
	return componentName(pkg) + "." + name
}

// componentName keeps the characters OpenAPI allows in a component name.
func componentName(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '_', r == '.', r == '-':
			return r
		}
		return '_'
	}, s)
}

// inline returns t's schema without making t itself a definition.
func (s *Schemas) inline(t reflect.Type) *openapi3.SchemaRef {
	var sc *openapi3.Schema
	switch t.Kind() {
	case reflect.Bool:
		sc = openapi3.NewBoolSchema()
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32:
		sc = openapi3.NewIntegerSchema()
	case reflect.Int64:
		sc = openapi3.NewInt64Schema()
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		sc = openapi3.NewIntegerSchema().WithMin(0)
	case reflect.Float32, reflect.Float64:
		sc = openapi3.NewFloat64Schema().WithFormat("double")
	case reflect.String:
		sc = openapi3.NewStringSchema()
	case reflect.Slice:
		if t.Elem() == byteSliceElemTyp {
			sc = openapi3.NewBytesSchema()
			break
		}
		// encoding/json writes a nil slice as null.
		sc = &openapi3.Schema{Type: &openapi3.Types{openapi3.TypeArray}, Items: s.For(t.Elem()), Nullable: true}
	case reflect.Array:
		n := uint64(t.Len())
		sc = &openapi3.Schema{Type: &openapi3.Types{openapi3.TypeArray}, Items: s.For(t.Elem()), MinItems: n, MaxItems: &n}
	case reflect.Map:
		switch t.Key().Kind() {
		case reflect.String, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
			reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
			sc = openapi3.NewObjectSchema().WithAdditionalProperties(nil)
			sc.AdditionalProperties.Schema = s.For(t.Elem())
			sc.Nullable = true
		default:
			sc = &openapi3.Schema{Description: "not representable in JSON: map key " + t.Key().String()}
		}
	case reflect.Struct:
		sc = s.object(t)
	case reflect.Pointer:
		return s.For(t)
	case reflect.Interface:
		sc = &openapi3.Schema{}
	default:
		// Channels, functions and complex numbers do not encode.
		sc = &openapi3.Schema{Description: "not representable in JSON: " + t.String()}
	}
	return openapi3.NewSchemaRef("", sc)
}

// object builds the schema of a struct's fields as encoding/json writes
// them, embedded structs' fields included.
func (s *Schemas) object(t reflect.Type) *openapi3.Schema {
	out := openapi3.NewObjectSchema()
	out.Properties = openapi3.Schemas{}
	s.fields(t, out, map[reflect.Type]bool{})
	return out
}

func (s *Schemas) fields(t reflect.Type, out *openapi3.Schema, seen map[reflect.Type]bool) {
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
				if _, custom := s.overrides[et]; !custom {
					s.fields(et, out, seen)
					continue
				}
			}
		}
		if !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		if hasOpt(opts, "string") {
			out.Properties[name] = openapi3.NewSchemaRef("", openapi3.NewStringSchema())
		} else {
			out.Properties[name] = s.For(ft)
		}
		if !hasOpt(opts, "omitempty") && !hasOpt(opts, "omitzero") && ft.Kind() != reflect.Pointer {
			out.Required = append(out.Required, name)
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
