package nats

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/factum-go/factum"
	"pgregory.net/rapid"
)

// wireBody is a command body of a struct type.
type wireBody struct {
	N    int               `json:"n"`
	Tags []string          `json:"tags,omitempty"`
	Attr map[string]string `json:"attr,omitempty"`
}

// genBody draws a command body: a typed value, a map, a string, nil,
// raw JSON (which travels compacted, as in a command's JSON), or a
// nested value whose strings and keys are made of JSON's punctuation.
func genBody(t *rapid.T) any {
	switch rapid.IntRange(0, 6).Draw(t, "body-kind") {
	case 6:
		return trickyValue(t, 0)
	case 0:
		return wireBody{N: rapid.Int().Draw(t, "n"), Tags: rapid.SliceOfN(rapid.String(), 0, 2).Draw(t, "tags")}
	case 1:
		return &wireBody{Attr: map[string]string{rapid.String().Draw(t, "k"): `"},{"body":1}` + rapid.String().Draw(t, "v")}}
	case 2:
		return map[string]any{"body": rapid.String().Draw(t, "s"), "x": []any{1.5, nil, true}}
	case 3:
		return rapid.String().Draw(t, "body-string")
	case 4:
		return nil
	}
	return json.RawMessage(` { "a" : [ 1 , "}" ] } `)
}

// trickyString draws a string of JSON's punctuation, escapes, "body"
// and the characters encoding/json escapes for HTML.
var trickyString = rapid.Map(rapid.SliceOfN(rapid.SampledFrom([]string{
	`"`, `\`, `\"`, `{`, `}`, `[`, `]`, `,`, `:`, ` `, `body`, `"body":`, `\u0062ody`, `<`, `>`, `&`, "\u2028", "\xff", "é",
}), 0, 8), func(ss []string) string { return strings.Join(ss, "") })

// trickyValue draws a JSON value of tricky strings, nested.
func trickyValue(t *rapid.T, depth int) any {
	switch k := rapid.IntRange(0, 4).Draw(t, "tricky-kind"); {
	case k == 0 || depth > 2:
		return trickyString.Draw(t, "tricky-string")
	case k == 1:
		return rapid.Float64Range(-1e9, 1e9).Draw(t, "tricky-number")
	case k == 2:
		return []any{trickyValue(t, depth+1), trickyValue(t, depth+1)}
	case k == 3:
		return nil
	}
	m := map[string]any{}
	for range rapid.IntRange(0, 3).Draw(t, "tricky-keys") {
		m[trickyString.Draw(t, "tricky-key")] = trickyValue(t, depth+1)
	}
	return m
}

// genCommands draws the commands of a batch: mostly of one aggregate,
// name and header, as a batch's are.
func genCommands(t *rapid.T) []*factum.Command {
	n := rapid.IntRange(1, 6).Draw(t, "commands")
	cmds := make([]*factum.Command, n)
	for i := range cmds {
		c := &factum.Command{
			ID: genString(t, "id", "01J0000000000000000000000"), ExpectedVersion: rapid.IntRange(-1, math.MaxInt).Draw(t, "expected"),
			AggregateID: factum.AggregateID{
				NamedAggregate: factum.NamedAggregate{Context: genString(t, "context", "shop"), Aggregate: genString(t, "aggregate", "cart")},
				ID:             genString(t, "agg-id", "x", ""),
				Tenant:         genString(t, "tenant", "", factum.DefaultTenant),
			},
			Name: genString(t, "name", "add", "remove"), Body: genBody(t), CreateTime: genTime(t, "create"),
			IsCreate: rapid.Bool().Draw(t, "create"), AllowCreate: rapid.Bool().Draw(t, "allow"), IsVoid: rapid.Bool().Draw(t, "void"),
			OwnerID: genString(t, "owner", ""),
		}
		c.RequestID = genString(t, "request", c.ID, "")
		switch rapid.IntRange(0, 4).Draw(t, "header") {
		case 0:
			c.Header = map[string]string{HeaderOrigin: "a"}
		case 1:
			c.Header = map[string]string{}
		case 2:
			c.Header = rapid.MapOfN(anyString, anyString, 0, 3).Draw(t, "header-map")
		case 3:
			c.Header = rapid.MapOfN(trickyString, trickyString, 0, 3).Draw(t, "header-tricky")
		}
		cmds[i] = c
	}
	return cmds
}

// sends returns the sends of cmds, each with its body's JSON as the bus
// makes it.
func sends(t testing.TB, cmds []*factum.Command) []*outSend {
	t.Helper()
	batch := make([]*outSend, len(cmds))
	for i, c := range cmds {
		body, err := marshalBody(c)
		if err != nil {
			t.Fatal(err)
		}
		batch[i] = &outSend{cmd: c, body: body}
	}
	return batch
}

// commandJSON returns c's JSON, the body of a message of c alone.
func commandJSON(t testing.TB, c *factum.Command) []byte {
	t.Helper()
	data, err := marshalCommand(c)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// jsonCommand is what a command becomes through its JSON, as a message
// of one command carries it (decodeCommand, unvalidated): the oracle of
// the binary encoding.
func jsonCommand(t testing.TB, data []byte) factum.Command {
	t.Helper()
	var w wireCommand
	if err := json.Unmarshal(data, &w); err != nil {
		t.Fatal(err)
	}
	c := w.Command
	c.Body = w.Body
	return c
}

// The commands of a batch decode as their JSON does: every field, the
// body as its JSON's bytes (a json.RawMessage), a header empty or nil
// alike nil, the time the same instant, at the same offset, in the same
// location.
func TestWireCommandsDecodeAsJSON(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		batch := sends(t, genCommands(rt))
		got, err := decodeCommands(encodeCommands(batch), len(batch))
		if err != nil {
			rt.Fatal(err)
		}
		if len(got) != len(batch) {
			rt.Fatalf("%d commands decoded, want %d", len(got), len(batch))
		}
		for i, s := range batch {
			want := jsonCommand(t, commandJSON(t, s.cmd))
			g := *got[i]
			if !sameTime(g.CreateTime, want.CreateTime) {
				rt.Fatalf("command %d: time %v, want %v", i, g.CreateTime, want.CreateTime)
			}
			g.CreateTime, want.CreateTime = time.Time{}, time.Time{}
			if !reflect.DeepEqual(g, want) {
				rt.Fatalf("command %d:\n got %#v\nwant %#v", i, g, want)
			}
		}
	})
}

// A batch's commands do not share their header maps: each is the
// command's own, as JSON decodes them.
func TestWireCommandsOwnHeaders(t *testing.T) {
	cmds := benchCommands(3)
	got, err := decodeCommands(encodeCommands(sends(t, cmds)), 3)
	if err != nil {
		t.Fatal(err)
	}
	got[0].Header["x"] = "y"
	if len(got[1].Header) != 1 || len(got[2].Header) != 1 {
		t.Errorf("a write to one command's header shows in another's: %v, %v", got[1].Header, got[2].Header)
	}
}

// The slices of decoded members share chunks but are each their own:
// an append to one never writes into another's.
func TestWireSlicesAreTheirOwn(t *testing.T) {
	cmds, err := decodeCommands(encodeCommands(sends(t, benchCommands(3))), 3)
	if err != nil {
		t.Fatal(err)
	}
	want := string(cmds[1].Body.(json.RawMessage))
	_ = append(cmds[0].Body.(json.RawMessage), "xxxxxxxx"...)
	if got := string(cmds[1].Body.(json.RawMessage)); got != want {
		t.Errorf("the second body is %s after an append to the first, want %s", got, want)
	}
	b, err := encodeSignals(benchSignals(3))
	if err != nil {
		t.Fatal(err)
	}
	sigs, err := decodeSignals(b, 3)
	if err != nil {
		t.Fatal(err)
	}
	_ = append(sigs[0].EventNames, "x")
	if fmt.Sprint(sigs[1].EventNames) != "[added]" {
		t.Errorf("the second signal's names are %v after an append to the first's, want [added]", sigs[1].EventNames)
	}
}

// Header keys that are not UTF-8 decode as JSON decodes them, and of two
// that become one key, the one JSON keeps wins (the last of the sorted
// keys), whatever order the map gives them in.
func TestWireHeaderKeysAsJSON(t *testing.T) {
	c := benchCommands(2)
	c[1].Header = map[string]string{"\xff": "ff", "\xfe": "fe", "\xfd": "fd", "ok": "1"}
	batch := sends(t, c)
	want := jsonCommand(t, commandJSON(t, batch[1].cmd)).Header
	if want["\ufffd"] != "ff" {
		t.Fatalf("JSON gives %q, want the value of the key \\xff", want)
	}
	for range 20 {
		got, err := decodeCommands(encodeCommands(batch), 2)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got[1].Header, want) {
			t.Fatalf("header %q, JSON gives %q", got[1].Header, want)
		}
	}
}

// A send without its body's JSON marshals the body.
func TestCommandBodyMarshals(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		cmds := genCommands(rt)
		for _, c := range cmds {
			want, err := json.Marshal(c.Body)
			if err != nil {
				rt.Fatal(err)
			}
			if got := (&outSend{cmd: c}).commandBody(); !bytes.Equal(got, want) {
				rt.Fatalf("body marshalled %s, want %s", got, want)
			}
		}
	})
}

// A body that is not a batch's binary encoding is refused, saying what
// it is.
func TestWireCommandsRefuse(t *testing.T) {
	good := encodeCommands(sends(t, benchCommands(2)))
	checkRefused(t, decodeCommands, []refusal{
		{"json", `[{"id":"x"},{"id":"y"}]`, "JSON"},
		{"other version", "\x7b", "version"},
		{"truncated", string(good[:len(good)-3]), "unexpected EOF"},
		{"no body", "\xf1\x22\x02\x0a\x00", "without a body"},
		{"odd header", "\xf1\x22\x06\x32\x00\x3a\x02\x0a\x00", "not pairs"},
		{"flag", "\xf1\x22\x04\x32\x00\x48\x02", "not a flag"},
		{"nanoseconds", "\xf1\x22\x0a\x32\x00\x42\x06\x10\x80\x94\xeb\xdc\x03", "nanoseconds"},
		{"offset", "\xf1\x22\x08\x32\x00\x42\x04\x18\x80\xc6\x0a", "offset"},
		{"default after a command", "\xf1\x22\x02\x32\x00\x12\x01a", "after a command"},
	})
}

// refusal is a body a decoder refuses, and what its error says.
type refusal struct {
	name, body, want string
}

// checkRefused checks that decode refuses the body of each case with a
// *wireError saying its want.
func checkRefused[T any](t *testing.T, decode func(body []byte, n int) ([]T, error), cases []refusal) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := decode([]byte(tc.body), 2)
			var we *wireError
			if !errors.As(err, &we) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("%v, want a wireError saying %q", err, tc.want)
			}
		})
	}
}

// Decoding any body returns commands or an error, never panics; what
// decodes encodes again to the same commands.
func FuzzDecodeCommands(f *testing.F) {
	f.Add(encodeCommands(sends(f, benchCommands(3))))
	other := benchCommands(2)
	other[1].AggregateID.Tenant = "t2"
	other[1].Name = "other"
	other[1].RequestID = ""
	other[1].Header = nil
	other[1].CreateTime = other[1].CreateTime.In(time.FixedZone("", -3600))
	other[1].ExpectedVersion = 4
	other[1].IsCreate, other[1].AllowCreate, other[1].IsVoid, other[1].OwnerID = true, true, true, "o"
	f.Add(encodeCommands(sends(f, other)))
	f.Add([]byte(`[{"id":"x"},{"id":"y"}]`))
	f.Fuzz(func(t *testing.T, body []byte) {
		cmds, err := decodeCommands(body, 64)
		if err != nil {
			return
		}
		batch := make([]*outSend, len(cmds))
		for i, c := range cmds {
			batch[i] = &outSend{cmd: c}
		}
		back, err := decodeCommands(encodeCommands(batch), len(cmds))
		if err != nil {
			t.Fatalf("re-encoded commands do not decode: %v", err)
		}
		if len(back) != len(cmds) {
			t.Fatalf("%d commands, then %d", len(cmds), len(back))
		}
		for i := range cmds {
			g, w := *back[i], *cmds[i]
			if !g.CreateTime.Equal(w.CreateTime) {
				t.Fatalf("command %d: time %v, then %v", i, w.CreateTime, g.CreateTime)
			}
			g.CreateTime, w.CreateTime = time.Time{}, time.Time{}
			// Without the command's JSON, the body is marshalled again:
			// null when it is not JSON.
			if body, err := json.Marshal(w.Body); err == nil {
				w.Body = json.RawMessage(body)
			} else {
				w.Body = json.RawMessage("null")
			}
			if !reflect.DeepEqual(g, w) {
				t.Fatalf("command %d\n%#v\nthen\n%#v", i, w, g)
			}
		}
	})
}

// benchCommands are n commands of one aggregate, as a sender batches
// them.
func benchCommands(n int) []*factum.Command {
	cmds := make([]*factum.Command, n)
	for i := range cmds {
		c := factum.NewCommand(factum.NamedAggregate{Context: "shop", Aggregate: "tally"}.WithID("t-1"), addN{N: i})
		c.Header = map[string]string{HeaderOrigin: "b"}
		c.AllowCreate = true
		cmds[i] = &c
	}
	return cmds
}

// BenchmarkWireCommandBatch encodes and decodes a batch of 64 commands,
// in JSON and in the binary encoding. Encoding starts from the JSON the
// bus makes of every command it sends: each command's in a JSON batch,
// each body's in the binary one; decoding ends with the commands,
// unvalidated.
func BenchmarkWireCommandBatch(b *testing.B) {
	batch := sends(b, benchCommands(64))
	datas := make([][]byte, len(batch))
	for i, s := range batch {
		datas[i] = commandJSON(b, s.cmd)
	}
	jsonBatch := func() []byte {
		size := 2
		for _, data := range datas {
			size += len(data) + 1
		}
		body := make([]byte, 0, size)
		body = append(body, '[')
		for i, data := range datas {
			if i > 0 {
				body = append(body, ',')
			}
			body = append(body, data...)
		}
		return append(body, ']')
	}
	jb, wb := jsonBatch(), encodeCommands(batch)
	b.Run("encode/json", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(int64(len(jb)))
		for b.Loop() {
			jsonBatch()
		}
	})
	b.Run("encode/wire", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(int64(len(wb)))
		for b.Loop() {
			encodeCommands(batch)
		}
	})
	b.Run("decode/json", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(int64(len(jb)))
		for b.Loop() {
			var ws []wireCommand
			if err := json.Unmarshal(jb, &ws); err != nil {
				b.Fatal(err)
			}
			cmds := make([]*factum.Command, len(ws))
			for i := range ws {
				cmds[i] = &ws[i].Command
				cmds[i].Body = ws[i].Body
			}
		}
	})
	b.Run("decode/wire", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(int64(len(wb)))
		for b.Loop() {
			if _, err := decodeCommands(wb, 64); err != nil {
				b.Fatal(err)
			}
		}
	})
}
