package eventsjson

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/factum-go/factum"
)

// FuzzDecode: the direct scan agrees with encoding/json on every array it
// accepts (bodies aside, which it trusts to be valid JSON, as Append
// wrote them, but never to be empty), Decode never panics, and whatever decodes with valid bodies
// re-encodes (Append) and decodes to the same events.
func FuzzDecode(f *testing.F) {
	one, _ := Append(nil, []factum.DomainEvent{{ID: "e-1", Name: "item_added", Revision: 2, Sequence: 1, IsLast: true, Body: []byte(`{"sku":"a","qty":1}`)}})
	two, _ := Append(nil, []factum.DomainEvent{
		{ID: "e-1", Name: "a", Sequence: 1, Body: []byte(`[1,"x",{"y":null}]`)},
		{ID: "e-2", Name: "b", Sequence: 2, IsLast: true, Body: []byte(`"\u00e9\"\\"`)},
	})
	for _, s := range [][]byte{one, two, []byte(`[]`), []byte(`null`), []byte(`[{"id":"e\"1"}]`),
		[]byte(`[{"id":"e","name":"n","sequence":1,"isLast":true,"body":{"a":[}}]`), []byte(`[{"sequence":1e3}]`), []byte("[{\"body\":\"\xff\"}]")} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if fast, ok := scan(b); ok {
			var slow []factum.DomainEvent
			if err := json.Unmarshal(b, &slow); err != nil {
				// The scan trusts each body to be the one JSON value
				// Append copied (it only finds where the value ends);
				// anything else it must refuse.
				for _, e := range fast {
					if !json.Valid(e.Body) {
						return
					}
				}
				t.Fatalf("scan accepts %q, encoding/json refuses it: %v", b, err)
			}
			if !equalEvents(fast, slow) {
				t.Fatalf("scan and encoding/json disagree on %q:\n scan %#v\n json %#v", b, fast, slow)
			}
		}
		events, err := Decode(b)
		if err != nil {
			return
		}
		for _, e := range events {
			if !json.Valid(e.Body) {
				return // Validate refuses such bodies before any append
			}
		}
		enc, err := Append(nil, events)
		if err != nil {
			return // a body that is not UTF-8: refused with IllegalArgument
		}
		again, err := Decode(enc)
		if err != nil || !equalEvents(events, again) {
			t.Fatalf("round trip of %q through %q: %#v %v", b, enc, again, err)
		}
	})
}

// jsonSpace is JSON's white space.
const jsonSpace = " \t\n\r"

func equalEvents(a, b []factum.DomainEvent) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		x, y := a[i], b[i]
		// The scan returns a body as it was appended, the white space
		// around the value included; encoding/json drops that space.
		if strings.Trim(string(x.Body), jsonSpace) != strings.Trim(string(y.Body), jsonSpace) {
			return false
		}
		x.Body, y.Body = nil, nil
		if !reflect.DeepEqual(x, y) {
			return false
		}
	}
	return true
}
