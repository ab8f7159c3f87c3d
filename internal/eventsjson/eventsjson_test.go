package eventsjson

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/factum-go/factum"
)

// eventsEqual compares events field by field and bodies by JSON value.
func eventsEqual(t *testing.T, got, want []factum.DomainEvent) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%d events, want %d", len(got), len(want))
	}
	for i := range want {
		g, w := got[i], want[i]
		if g.ID != w.ID || g.Name != w.Name || g.Revision != w.Revision || g.Sequence != w.Sequence || g.IsLast != w.IsLast {
			t.Fatalf("event %d = %+v, want %+v", i, g, w)
		}
		var gv, wv any
		if json.Unmarshal(g.Body, &gv) != nil || json.Unmarshal(w.Body, &wv) != nil || !reflect.DeepEqual(gv, wv) {
			t.Fatalf("event %d body = %s, want %s", i, g.Body, w.Body)
		}
	}
}

func TestEventsEncodeDecode(t *testing.T) {
	bodies := []string{
		`{}`, `[]`, `null`, `true`, `0`, `-1.5e10`, `"text"`, `""`,
		`{"a":"}],{\"","b":[1,{"c":"]"}],"d":null}`,
		` {"spaced" : [ 1 , 2 ] } `,
		`"\\"`, `"\u00e9\n"`, `[[[[]]]]`, `{"nested":{"deep":{"x":"y,z"}}}`,
	}
	for _, body := range bodies {
		for _, ids := range [][2]string{{"e-1", "thing_happened"}, {`quote"d`, "n"}, {`back\slash`, "n"}} {
			events := []factum.DomainEvent{
				{ID: ids[0], Name: ids[1], Sequence: 1, Body: json.RawMessage(body)},
				{ID: "e-2", Name: "other", Revision: 3, Sequence: 2, IsLast: true, Body: json.RawMessage(body)},
			}
			b, err := Append(nil, events)
			if err != nil {
				t.Fatal(err)
			}
			if !json.Valid(b) {
				t.Fatalf("encoded events are not JSON: %s", b)
			}
			var viaJSON []factum.DomainEvent
			if err := json.Unmarshal(b, &viaJSON); err != nil {
				t.Fatal(err)
			}
			eventsEqual(t, viaJSON, events)
			got, err := Decode(b)
			if err != nil {
				t.Fatal(err)
			}
			eventsEqual(t, got, events)
			if _, direct := scan(b); direct != (ids[0] == "e-1") {
				t.Fatalf("direct scan of %s: %v, want it for IDs without escapes only", b, direct)
			}
		}
	}
}

// Arrays not in the writer's form (written by another version, or by
// hand) decode through encoding/json.
func TestEventsDecodeForeignForm(t *testing.T) {
	for _, in := range []string{
		`[{"name":"n","id":"e","sequence":1,"isLast":true,"body":{}}]`,
		`[ {"id":"e","name":"n","sequence":1,"isLast":true,"body":{}} ]`,
		`[{"id":"e","name":"n","sequence":1,"isLast":true,"body":{},"extra":1}]`,
		`[{"id":"e\u0041","name":"n","sequence":1,"body":1}]`,
		`[]`,
	} {
		var want []factum.DomainEvent
		if err := json.Unmarshal([]byte(in), &want); err != nil {
			t.Fatal(err)
		}
		got, err := Decode([]byte(in))
		if err != nil {
			t.Fatalf("%s: %v", in, err)
		}
		eventsEqual(t, got, want)
	}
	if _, err := Decode([]byte(`[{"id":"e","name":"n","sequence":1,"body":{]`)); err == nil {
		t.Fatal("a broken array decoded")
	}
}

func FuzzEventsRoundTrip(f *testing.F) {
	for _, s := range []string{`{}`, `"a\"b"`, `[1,"]"]`, ` 1 `, `{"k":{"l":[null,true]}}`} {
		f.Add(s, "id-1", 2)
	}
	f.Fuzz(func(t *testing.T, body, id string, revision int) {
		if !json.Valid([]byte(body)) || factum.ValidateID("id", id) != nil || revision < 0 {
			return
		}
		events := []factum.DomainEvent{{ID: id, Name: "n", Revision: revision, Sequence: 1, IsLast: true, Body: json.RawMessage(body)}}
		b, err := Append(nil, events)
		if err != nil {
			return // invalid UTF-8 is refused
		}
		got, err := Decode(b)
		if err != nil {
			t.Fatalf("%s: %v", b, err)
		}
		eventsEqual(t, got, events)
	})
}
