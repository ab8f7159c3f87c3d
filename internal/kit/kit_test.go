package kit

import (
	"errors"
	"fmt"
	"maps"
	"path"
	"strings"
	"sync"
	"testing"

	"github.com/factum-go/factum"
)

func TestCodeMismatch(t *testing.T) {
	notFound := factum.NotFound("no such thing")
	cases := []struct {
		name string
		err  error
		code factum.Code
		ok   bool
	}{
		{"the code", notFound, factum.CodeNotFound, true},
		{"wrapped", fmt.Errorf("load: %w", notFound), factum.CodeNotFound, true},
		{"no error", nil, factum.CodeNotFound, false},
		{"another code", notFound, factum.CodeIllegalArgument, false},
		{"not a factum error", errors.New("plain"), factum.CodeNotFound, false},
		{"the code without its sentinel", &factum.Error{Code: factum.CodeNotFound, Message: "bare"}, factum.CodeNotFound, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := CodeMismatch(c.err, c.code); (got == nil) != c.ok {
				t.Fatalf("CodeMismatch(%v, %s) = %v, want a match: %v", c.err, c.code, got, c.ok)
			}
		})
	}
}

func TestJSONEqual(t *testing.T) {
	cases := []struct {
		a, b string
		want bool
	}{
		{`{"a":1,"b":[1,2]}`, `{ "b": [1, 2], "a": 1.0 }`, true},
		{`{"a":1}`, `{"a":2}`, false},
		{`[1,2]`, `[2,1]`, false},
		{`{"a":1}`, `{"a":1`, false},
		{``, ``, false},
	}
	for _, c := range cases {
		if got := JSONEqual([]byte(c.a), []byte(c.b)); got != c.want {
			t.Errorf("JSONEqual(%s, %s) = %v, want %v", c.a, c.b, got, c.want)
		}
	}
}

func TestUniqueName(t *testing.T) {
	a, b := UniqueName(t, "p_"), UniqueName(t, "p_")
	if a == b || len(a) != len("p_")+8 || a[:2] != "p_" {
		t.Fatalf("UniqueName gave %q and %q, want two distinct names of p_ and 8 characters", a, b)
	}
}

func TestRunParallelRunsEveryCaseOnWhatOpenReturns(t *testing.T) {
	var mu sync.Mutex
	got := map[string]string{}
	t.Run("kit", func(t *testing.T) {
		record := func(t *testing.T, store string) {
			mu.Lock()
			defer mu.Unlock()
			got[t.Name()] = store
		}
		RunParallel(t, func(t *testing.T) string { return "store of " + t.Name() },
			[]Case[string]{{Name: "A", Run: record}, {Name: "B", Run: record}})
	})
	want := map[string]string{
		"TestRunParallelRunsEveryCaseOnWhatOpenReturns/kit/A": "store of TestRunParallelRunsEveryCaseOnWhatOpenReturns/kit/A",
		"TestRunParallelRunsEveryCaseOnWhatOpenReturns/kit/B": "store of TestRunParallelRunsEveryCaseOnWhatOpenReturns/kit/B",
	}
	if !maps.Equal(got, want) {
		t.Fatalf("the cases saw %v, want %v", got, want)
	}
}

// Serial cases run one at a time, in order, before any parallel case
// starts; the parallel ones then run together.
func TestRunParallelRunsSerialCasesAloneFirst(t *testing.T) {
	var (
		mu      sync.Mutex
		order   []string
		running int
		beside  []string // serial cases that started while another ran
	)
	var together sync.WaitGroup // the parallel cases wait for each other
	together.Add(2)
	t.Run("kit", func(t *testing.T) {
		run := func(t *testing.T, serial bool) {
			mu.Lock()
			running++
			if serial && running > 1 {
				beside = append(beside, t.Name())
			}
			order = append(order, path.Base(t.Name()))
			mu.Unlock()
			if !serial {
				together.Done()
				together.Wait() // hangs unless both run at once
			}
			mu.Lock()
			running--
			mu.Unlock()
		}
		RunParallel(t, func(t *testing.T) bool { return strings.HasPrefix(path.Base(t.Name()), "S") }, []Case[bool]{
			{Name: "P1", Run: run},
			{Name: "S1", Run: run, Serial: true},
			{Name: "P2", Run: run},
			{Name: "S2", Run: run, Serial: true},
		})
	})
	if len(order) != 4 || order[0] != "S1" || order[1] != "S2" {
		t.Fatalf("ran %v, want S1 and S2 first, in order", order)
	}
	if len(beside) > 0 {
		t.Fatalf("serial cases %v ran beside another", beside)
	}
}

// Fixtures of two cases name different aggregate types, in the context
// "kit", after the prefix; ID is an aggregate of the fixture's type.
func TestFixtureIsUniqueToItsCase(t *testing.T) {
	var a, b Fixture
	t.Run("a", func(t *testing.T) { a = NewFixture(t, "acct_") })
	t.Run("b", func(t *testing.T) { b = NewFixture(t, "acct_") })
	if a.Named == b.Named {
		t.Fatalf("two cases share the aggregate type %v", a.Named)
	}
	for _, f := range []Fixture{a, b} {
		if f.Named.Context != "kit" || !strings.HasPrefix(f.Named.Aggregate, "acct_") {
			t.Errorf("fixture type %v: want context kit and a type starting acct_", f.Named)
		}
		if id := f.ID("x"); id.NamedAggregate != f.Named || id.ID != "x" {
			t.Errorf("ID(x) = %v, want x of %v", id, f.Named)
		}
	}
}
