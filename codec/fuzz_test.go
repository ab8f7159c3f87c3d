package codec_test

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/codec"
)

// fuzzItemAdded is at revision 2: revision 0 named the quantity "n",
// revision 1 "count".
type fuzzItemAdded struct {
	SKU string `json:"sku"`
	Qty int    `json:"qty"`
}

// renameField returns an upcaster moving a top-level field.
func renameField(from, to string) codec.Upcaster {
	return func(body json.RawMessage) (json.RawMessage, error) {
		var m map[string]json.RawMessage
		if err := json.Unmarshal(body, &m); err != nil {
			return nil, factum.Errorf(factum.CodeBadRequest, "not an object: %w", err)
		}
		if v, ok := m[from]; ok {
			m[to] = v
			delete(m, from)
		}
		return json.Marshal(m)
	}
}

// FuzzDecodeUpcast: decoding any body at any revision through an upcaster
// chain never panics, fails with an error (an unknown name, a revision
// without an upcaster, a body that does not fit), and what it decodes
// encodes and decodes again to the same value.
func FuzzDecodeUpcast(f *testing.F) {
	f.Add("item_added", 0, []byte(`{"sku":"a","n":2}`))
	f.Add("item_added", 1, []byte(`{"sku":"a","count":2}`))
	f.Add("item_added", 2, []byte(`{"sku":"a","qty":2}`))
	f.Add("item_added", 3, []byte(`{}`))
	f.Add("item_added", -1, []byte(`{}`))
	f.Add("item_added", 0, []byte(`[1,2]`))
	f.Add("item_added", 2, []byte(`{"qty":"x"}`))
	f.Add("unknown", 0, []byte(`{}`))
	f.Add("item_added", 0, []byte("\xff"))
	reg := codec.NewRegistry()
	if err := codec.Register[fuzzItemAdded](reg, codec.Name("item_added"), codec.Revision(2)); err != nil {
		f.Fatal(err)
	}
	if err := reg.AddUpcaster("item_added", 0, renameField("n", "count")); err != nil {
		f.Fatal(err)
	}
	if err := reg.AddUpcaster("item_added", 1, renameField("count", "qty")); err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, name string, revision int, body []byte) {
		v, err := reg.Decode(name, revision, body)
		if err != nil {
			var fe *factum.Error
			var ue *codec.UnknownTypeError
			if !errors.As(err, &fe) && !errors.As(err, &ue) {
				t.Fatalf("Decode(%q, %d, %q) = %v: want a *factum.Error or *codec.UnknownTypeError", name, revision, body, err)
			}
			return
		}
		n, rev, enc, err := reg.Encode(v)
		if err != nil || n != name || rev != 2 {
			t.Fatalf("Encode(%#v) = %q %d %v", v, n, rev, err)
		}
		again, err := reg.Decode(n, rev, enc)
		if err != nil || again != v {
			t.Fatalf("round trip of %#v: %#v %v", v, again, err)
		}
	})
}
