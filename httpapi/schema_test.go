package httpapi_test

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/httpapi"
)

type node struct {
	Name     string  `json:"name"`
	Children []*node `json:"children,omitempty"`
}

type base struct {
	ID string `json:"id"`
}

type sample struct {
	base
	Count    int                 `json:"count"`
	Ratio    float64             `json:"ratio,omitempty"`
	When     time.Time           `json:"when"`
	Maybe    *string             `json:"maybe"`
	Tags     []string            `json:"tags"`
	Counts   map[string]uint     `json:"counts"`
	Raw      json.RawMessage     `json:"raw"`
	Blob     []byte              `json:"blob"`
	Stage    factum.CommandStage `json:"stage"`
	Fixed    [2]bool             `json:"fixed"`
	Tree     node                `json:"tree"`
	AsString int                 `json:"asString,string"`
	Skipped  int                 `json:"-"`
	NoTag    bool
}

func TestSchemas(t *testing.T) {
	sc := httpapi.NewSchemas()
	ref := sc.Define("sample", reflect.TypeFor[sample]())
	if ref.Ref != "#/components/schemas/sample" {
		t.Fatalf("ref %v", ref.Ref)
	}
	b, err := json.Marshal(sc.Defs)
	if err != nil {
		t.Fatal(err)
	}
	var defs map[string]struct {
		Type       any                        `json:"type"`
		Properties map[string]json.RawMessage `json:"properties"`
		Required   []string                   `json:"required"`
	}
	if err := json.Unmarshal(b, &defs); err != nil {
		t.Fatal(err)
	}
	s := defs["sample"]
	want := map[string]string{
		"id":       `{"type":"string"}`,
		"count":    `{"type":"integer"}`,
		"ratio":    `{"format":"double","type":"number"}`,
		"when":     `{"format":"date-time","type":"string"}`,
		"maybe":    `{"nullable":true,"type":"string"}`,
		"tags":     `{"items":{"type":"string"},"nullable":true,"type":"array"}`,
		"counts":   `{"additionalProperties":{"minimum":0,"type":"integer"},"nullable":true,"type":"object"}`,
		"raw":      `{}`,
		"blob":     `{"format":"byte","type":"string"}`,
		"stage":    `{"type":"string"}`,
		"fixed":    `{"items":{"type":"boolean"},"maxItems":2,"minItems":2,"type":"array"}`,
		"tree":     `{"$ref":"#/components/schemas/httpapi_test.node"}`,
		"asString": `{"type":"string"}`,
		"NoTag":    `{"type":"boolean"}`,
	}
	for name, w := range want {
		if got := string(s.Properties[name]); got != w {
			t.Errorf("%s: %s, want %s", name, got, w)
		}
	}
	if len(s.Properties) != len(want) {
		t.Errorf("%d properties, want %d: %v", len(s.Properties), len(want), s.Properties)
	}
	for _, r := range s.Required {
		if r == "ratio" || r == "maybe" {
			t.Errorf("%s is optional but required", r)
		}
	}
	// The recursive type refers to itself instead of recursing forever.
	if got := string(defs["httpapi_test.node"].Properties["children"]); got != `{"items":{"allOf":[{"$ref":"#/components/schemas/httpapi_test.node"}],"nullable":true,"type":"object"},"nullable":true,"type":"array"}` {
		t.Errorf("node.children %s", got)
	}
}
