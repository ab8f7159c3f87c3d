package nats

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/factum-go/factum"
)

// nonZero returns a value of type typ other than its zero, every field
// of a struct set, so that a codec that leaves one out shows. A kind it
// does not know fails the test: teach it the kind rather than skip the
// field.
func nonZero(t *testing.T, typ reflect.Type) reflect.Value {
	t.Helper()
	v := reflect.New(typ).Elem()
	switch typ {
	case reflect.TypeFor[time.Time]():
		v.Set(reflect.ValueOf(time.Date(2026, 12, 5, 10, 30, 0, 123456789, time.UTC)))
		return v
	case reflect.TypeFor[factum.CommandStage]():
		v.Set(reflect.ValueOf(factum.StageProcessed))
		return v
	}
	switch typ.Kind() {
	case reflect.String:
		v.SetString("v-" + strings.ToLower(typ.Name()))
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		v.SetInt(7)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		v.SetUint(7)
	case reflect.Float32, reflect.Float64:
		v.SetFloat(1.5)
	case reflect.Interface:
		// A string: JSON gives it back as it is, whatever the interface.
		v.Set(reflect.ValueOf("v-any"))
	case reflect.Map:
		v.Set(reflect.MakeMap(typ))
		v.SetMapIndex(nonZero(t, typ.Key()), nonZero(t, typ.Elem()))
	case reflect.Slice:
		v.Set(reflect.Append(reflect.MakeSlice(typ, 0, 1), nonZero(t, typ.Elem())))
	case reflect.Pointer:
		p := reflect.New(typ.Elem())
		p.Elem().Set(nonZero(t, typ.Elem()))
		v.Set(p)
	case reflect.Struct:
		for i := range typ.NumField() {
			if typ.Field(i).IsExported() {
				v.Field(i).Set(nonZero(t, typ.Field(i).Type))
			}
		}
	default:
		t.Fatalf("nonZero does not know %v (kind %v): teach it", typ, typ.Kind())
	}
	return v
}

// jsonFields returns the exported fields of struct type typ that its
// JSON carries (not tagged "-").
func jsonFields(typ reflect.Type) []reflect.StructField {
	var fs []reflect.StructField
	for i := range typ.NumField() {
		f := typ.Field(i)
		if f.IsExported() && f.Tag.Get("json") != "-" {
			fs = append(fs, f)
		}
	}
	return fs
}

// sameField reports whether a and b hold the same value, times the same
// instant.
func sameField(a, b reflect.Value) bool {
	if ta, ok := a.Interface().(time.Time); ok {
		return ta.Equal(b.Interface().(time.Time))
	}
	return reflect.DeepEqual(a.Interface(), b.Interface())
}

// Every field of a command its JSON carries travels in a batch, as the
// batch's first command (whose values are the defaults) and as a later
// one: a field added to factum.Command that the binary encoding leaves
// out fails here, whatever its type.
func TestWireCommandCarriesEveryField(t *testing.T) {
	typ := reflect.TypeFor[factum.Command]()
	for _, f := range jsonFields(typ) {
		t.Run(f.Name, func(t *testing.T) {
			var c factum.Command
			reflect.ValueOf(&c).Elem().FieldByIndex(f.Index).Set(nonZero(t, f.Type))
			plain := &factum.Command{}
			for _, cmds := range [][]*factum.Command{{&c, plain}, {plain, &c}} {
				batch := sends(t, cmds)
				got, err := decodeCommands(encodeCommands(batch), len(batch))
				if err != nil {
					t.Fatal(err)
				}
				for i, s := range batch {
					want := reflect.ValueOf(jsonCommand(t, commandJSON(t, s.cmd))).FieldByIndex(f.Index)
					g := reflect.ValueOf(*got[i]).FieldByIndex(f.Index)
					if !sameField(g, want) {
						t.Errorf("command %d of %d: %s is %#v, its JSON gives %#v", i, len(batch), f.Name, g.Interface(), want.Interface())
					}
				}
			}
			if reflect.ValueOf(jsonCommand(t, commandJSON(t, &c))).FieldByIndex(f.Index).IsZero() {
				t.Errorf("%s is zero through JSON: nonZero's value does not test it", f.Name)
			}
		})
	}
}

// Every field of a signal its JSON carries travels in a batch of
// signals, as the first signal's (the defaults) and as a later one's: a
// field added to factum.Signal that the binary encoding leaves out fails
// here, whatever its type.
func TestWireSignalCarriesEveryField(t *testing.T) {
	typ := reflect.TypeFor[factum.Signal]()
	for _, f := range jsonFields(typ) {
		t.Run(f.Name, func(t *testing.T) {
			s := factum.Signal{Stage: factum.StageSent}
			reflect.ValueOf(&s).Elem().FieldByIndex(f.Index).Set(nonZero(t, f.Type))
			plain := factum.Signal{Stage: factum.StageSent}
			for _, sigs := range [][]factum.Signal{{s, plain}, {plain, s}} {
				b, err := encodeSignals(sigs)
				if err != nil {
					t.Fatal(err)
				}
				got, err := decodeSignals(b, len(sigs))
				if err != nil {
					t.Fatal(err)
				}
				for i := range sigs {
					want := reflect.ValueOf(jsonSignal(t, sigs[i])).FieldByIndex(f.Index)
					g := reflect.ValueOf(got[i]).FieldByIndex(f.Index)
					if !sameField(g, want) {
						t.Errorf("signal %d of %d: %s is %#v, its JSON gives %#v", i, len(sigs), f.Name, g.Interface(), want.Interface())
					}
				}
			}
			if reflect.ValueOf(jsonSignal(t, s)).FieldByIndex(f.Index).IsZero() {
				t.Errorf("%s is zero through JSON: nonZero's value does not test it", f.Name)
			}
		})
	}
}
