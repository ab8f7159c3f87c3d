package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
)

// writeText renders a JSON answer for people: an object as aligned
// "name  value" lines (nested objects by dotted names, an aggregate
// identity as context.aggregate/id@tenant), a list as its elements one
// after another, a scalar as itself. --json gives the answer unchanged.
func writeText(out io.Writer, b []byte) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		_, err := out.Write(b)
		return err
	}
	tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	renderValue(tw, v)
	return tw.Flush()
}

func renderValue(w io.Writer, v any) {
	switch x := v.(type) {
	case map[string]any:
		renderObject(w, "", x)
	case []any:
		if len(x) == 0 {
			fmt.Fprintln(w, "(none)")
		}
		for i, e := range x {
			if i > 0 {
				fmt.Fprintln(w)
			}
			if _, ok := e.(map[string]any); ok {
				fmt.Fprintf(w, "# %d\n", i+1)
			}
			renderValue(w, e)
		}
	default:
		fmt.Fprintln(w, scalar(x))
	}
}

func renderObject(w io.Writer, prefix string, m map[string]any) {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		name := prefix + k
		switch x := m[k].(type) {
		case map[string]any:
			if id, ok := identity(x); ok {
				fmt.Fprintf(w, "%s\t%s\n", name, id)
			} else if k == "state" || k == "body" || k == "result" || len(x) == 0 {
				fmt.Fprintf(w, "%s\t%s\n", name, compact(x))
			} else {
				renderObject(w, name+".", x)
			}
		case []any:
			if len(x) > 0 {
				if _, objects := x[0].(map[string]any); objects {
					for i, e := range x {
						fmt.Fprintf(w, "%s[%d]\t%s\n", name, i, compact(e))
					}
					continue
				}
			}
			fmt.Fprintf(w, "%s\t%s\n", name, compact(x))
		default:
			fmt.Fprintf(w, "%s\t%s\n", name, scalar(x))
		}
	}
}

// identity formats an aggregate identity object.
func identity(m map[string]any) (string, bool) {
	if len(m) != 4 {
		return "", false
	}
	get := func(k string) (string, bool) { s, ok := m[k].(string); return s, ok }
	c, ok1 := get("context")
	a, ok2 := get("aggregate")
	id, ok3 := get("id")
	t, ok4 := get("tenant")
	if !ok1 || !ok2 || !ok3 || !ok4 {
		return "", false
	}
	return c + "." + a + "/" + id + "@" + t, true
}

func compact(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

func scalar(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case string:
		if x == "" {
			return `""`
		}
		return strings.ReplaceAll(x, "\n", `\n`)
	}
	return fmt.Sprint(v)
}
