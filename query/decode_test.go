package query_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/query"
)

// nestedCondition is a condition nested depth levels deep, each level an
// AND of one child, around one EQ: the shape of the 4,990-level, 160 kB
// request that took seconds of CPU and a GB of memory to decode.
func nestedCondition(depth int) []byte {
	var b bytes.Buffer
	for range depth {
		b.WriteString(`{"operator":"AND","children":[`)
	}
	b.WriteString(`{"field":"state.a","operator":"EQ","value":1}`)
	for range depth {
		b.WriteString(`]}`)
	}
	return b.Bytes()
}

// wideCondition is an AND of n EQ children, about 50 bytes each.
func wideCondition(n int) []byte {
	return andOf(n, func(b *bytes.Buffer, i int) {
		fmt.Fprintf(b, `{"field":"state.f%d","operator":"EQ","value":%d}`, i%10, i)
	})
}

// andOf is the JSON of an AND of n children, the i-th written by child.
func andOf(n int, child func(b *bytes.Buffer, i int)) []byte {
	var b bytes.Buffer
	b.WriteString(`{"operator":"AND","children":[`)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		child(&b, i)
	}
	b.WriteString(`]}`)
	return b.Bytes()
}

// The decoder refuses a condition nested beyond MaxDecodeDepth as soon as
// it reaches that depth, whether the condition comes alone, inside a
// query or inside a paged query; and one with more than MaxDecodeNodes
// nodes once it has counted them.
func TestDecodeLimits(t *testing.T) {
	bomb := nestedCondition(4990)
	if len(bomb) < 150_000 {
		t.Fatalf("bomb is %d bytes", len(bomb))
	}
	inQuery := append(append([]byte(`{"condition":`), bomb...), '}')
	for _, c := range []struct {
		name  string
		parse func([]byte) error
		data  []byte
	}{
		{"condition", func(b []byte) error { _, err := query.ParseCondition(b); return err }, bomb},
		{"query", func(b []byte) error { _, err := query.ParseQuery(b); return err }, inQuery},
		{"paged query", func(b []byte) error { _, err := query.ParsePagedQuery(b); return err }, inQuery},
		{"json.Unmarshal", func(b []byte) error { var c query.Condition; return json.Unmarshal(b, &c) }, bomb},
	} {
		t.Run(c.name, func(t *testing.T) {
			allocs := testing.AllocsPerRun(1, func() {
				err := c.parse(c.data)
				if factum.CodeOf(err) != factum.CodeIllegalArgument || !strings.Contains(err.Error(), "deeper than") {
					t.Fatalf("nested bomb: %v, want IllegalArgument naming the depth limit", err)
				}
			})
			// Refused at the limit, not after building 4,990 levels: the
			// old decoder made one decoder (and a copy of the rest) per
			// level.
			if allocs > 5000 {
				t.Fatalf("refusing the bomb took %.0f allocations", allocs)
			}
		})
	}
	// At the limit it decodes.
	c, err := query.ParseCondition(nestedCondition(query.MaxDecodeDepth - 1))
	if err != nil {
		t.Fatalf("condition at the depth limit: %v", err)
	}
	for range query.MaxDecodeDepth - 1 {
		c = c.Children[0]
	}
	if c.Field != "state.a" || c.Operator != query.OpEq {
		t.Fatalf("innermost condition %+v", c)
	}
	if _, err := query.ParseCondition(nestedCondition(query.MaxDecodeDepth)); err == nil {
		t.Fatal("condition beyond the depth limit decoded")
	}
	if _, err := query.ParseCondition(wideCondition(query.MaxDecodeNodes - 1)); err != nil {
		t.Fatalf("condition with the most nodes: %v", err)
	}
	if _, err := query.ParseCondition(wideCondition(query.MaxDecodeNodes)); factum.CodeOf(err) != factum.CodeIllegalArgument || !strings.Contains(err.Error(), "nodes") {
		t.Fatalf("condition over the node limit: %v", err)
	}
}

// The single-pass decoder keeps what the old one accepted and refused.
func TestDecodeConditionForms(t *testing.T) {
	ok := []struct {
		json string
		want query.Condition
	}{
		{`null`, query.Condition{}},
		{`{}`, query.Condition{}},
		{`{"operator":"and","children":[null,{"operator":"ALL"}]}`, query.Condition{Operator: query.OpAnd, Children: []query.Condition{{}, {Operator: query.OpAll}}}},
		{`{"Field":"state.a","OPERATOR":"in","value":[1,"x",true,null]}`, query.Condition{Field: "state.a", Operator: query.OpIn, Value: []any{1.0, "x", true, nil}}},
		{`{"field":"s","operator":"CONTAINS","value":"x","options":{"ignoreCase":true,"zoneId":"UTC"}}`,
			query.Condition{Field: "s", Operator: query.OpContains, Value: "x", Options: query.Options{IgnoreCase: true, ZoneID: "UTC"}}},
		{`{"operator":"OR","children":null}`, query.Condition{Operator: query.OpOr}},
	}
	for _, c := range ok {
		got, err := query.ParseCondition([]byte(c.json))
		if err != nil {
			t.Fatalf("%s: %v", c.json, err)
		}
		want, _ := json.Marshal(c.want)
		have, _ := json.Marshal(got)
		if !bytes.Equal(want, have) {
			t.Fatalf("%s decoded to %s, want %s", c.json, have, want)
		}
	}
	bad := []string{
		`{"field":"a","bogus":1}`,
		`{"operator":"NOPE"}`,
		`{"field":1}`,
		`{"children":{}}`,
		`{"children":[1]}`,
		`{"options":{"nope":true}}`,
		`[]`,
		`{"field":"a"} {}`,
		`{"field":"a"`,
		`{"operator":"AND","children":[{"operator":"EQ","field":"x","bad":2}]}`,
		``,
	}
	for _, b := range bad {
		if _, err := query.ParseCondition([]byte(b)); factum.CodeOf(err) != factum.CodeIllegalArgument {
			t.Fatalf("%q: %v, want IllegalArgument", b, err)
		}
	}
}
