package telemetry

import (
	"context"
	"testing"

	"github.com/factum-go/factum/aggregate"
	"github.com/prometheus/client_golang/prometheus"
)

// valueContext is a context of a type that cannot be compared.
type valueContext struct {
	context.Context
	values map[any]any
}

func (v valueContext) Value(key any) any {
	if x, ok := v.values[key]; ok {
		return x
	}
	return v.Context.Value(key)
}

// A type's observer travels in the context made for the previous command
// when the parent repeats (a dispatcher's), in a new one otherwise, and
// each carries the observer over its own parent: a context of a type that
// cannot be compared gets a new one, rather than a panic.
func TestTheTypesObserverContextFollowsItsParent(t *testing.T) {
	counter := func() prometheus.Counter { return prometheus.NewCounter(prometheus.CounterOpts{Name: "c"}) }
	o := &typeObs{hits: counter(), misses: counter(), retries: counter()}
	type key struct{}
	a := context.WithValue(context.Background(), key{}, "a")
	b := context.WithValue(context.Background(), key{}, "b")
	odd := valueContext{Context: context.Background(), values: map[any]any{key{}: "odd"}}
	// Comparable by type, but comparing it panics: its field holds odd.
	wrapped := struct{ context.Context }{odd}
	first := o.context(a)
	for _, tc := range []struct {
		name   string
		parent context.Context
		want   string
		same   bool // the context made for the previous command
	}{
		{"the same parent", a, "a", true},
		{"another parent", b, "b", false},
		{"the first parent again", a, "a", false},
		{"a parent that cannot be compared", odd, "odd", false},
		{"it again", odd, "odd", false},
		{"a comparable struct holding one that cannot be compared", wrapped, "odd", false},
		{"that again", wrapped, "odd", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			prev := o.last.Load()
			ctx := o.context(tc.parent)
			if got := aggregate.CacheObserverFrom(ctx); got != o {
				t.Fatalf("observer %v, want the type's", got)
			}
			if got, _ := ctx.Value(key{}).(string); got != tc.want {
				t.Fatalf("parent's value %q, want %q", got, tc.want)
			}
			if same := ctx == context.Context(prev); same != tc.same {
				t.Fatalf("reused the previous context: %v, want %v", same, tc.same)
			}
		})
	}
	if got, _ := first.Value(key{}).(string); got != "a" {
		t.Fatalf("a context kept past its command reads %q, want a", got)
	}
}
