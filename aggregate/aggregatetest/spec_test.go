package aggregatetest_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/aggregate"
	"github.com/factum-go/factum/aggregate/aggregatetest"
)

type tally struct{ N int }
type bump struct{ By int }
type bumped struct{ By int }
type secret struct{ hidden int } // an event whose field JSON cannot carry
type leak struct{}

var tallies = aggregate.New[tally]("test", "tally",
	aggregate.Source(func(s *tally, e bumped) { s.N += e.By }),
	aggregate.Emits[tally, secret](),
	aggregate.Handle(func(_ context.Context, _ tally, c bump) ([]any, error) {
		if c.By == 0 {
			return nil, factum.IllegalArgument("by zero")
		}
		return []any{bumped(c)}, nil
	}, aggregate.AllowCreate()),
	aggregate.Handle(func(context.Context, tally, leak) ([]any, error) {
		return []any{secret{hidden: 7}}, nil
	}, aggregate.AllowCreate()),
)

// recorder is a testing.TB that records failures instead of failing.
type recorder struct {
	testing.TB
	errs []string
}

func (r *recorder) Helper() {}
func (r *recorder) Errorf(format string, args ...any) {
	r.errs = append(r.errs, fmt.Sprintf(format, args...))
}
func (r *recorder) Fatalf(format string, args ...any) {
	r.errs = append(r.errs, fmt.Sprintf(format, args...))
	panic("fatal")
}

func TestPassingScenario(t *testing.T) {
	aggregatetest.For(t, tallies).Given(bumped{By: 2}).
		When(bump{By: 3}).Events(bumped{By: 3}).EventTypes(bumped{}).State(tally{N: 5}).Version(2).
		Fork("branch", func(t *testing.T, s *aggregatetest.Spec[tally]) {
			s.When(bump{By: 1}).State(tally{N: 6}).Version(3)
		}).
		Fork("branches do not see each other", func(t *testing.T, s *aggregatetest.Spec[tally]) {
			s.When(bump{By: 10}).State(tally{N: 15}).Version(3)
		})
	aggregatetest.For(t, tallies).GivenState(tally{N: 40}, 9).When(bump{By: 2}).State(tally{N: 42}).Version(10)
	aggregatetest.For(t, tallies).When(bump{By: 0}).Error(factum.CodeIllegalArgument).Version(0)
}

// Every expectation fails when it should, with a diff that names the
// difference.
func TestFailingExpectationsReport(t *testing.T) {
	cases := []struct {
		name  string
		run   func(tb testing.TB)
		wants string
	}{
		{"events", func(tb testing.TB) { aggregatetest.For(tb, tallies).When(bump{By: 3}).Events(bumped{By: 4}) }, `-       "By": 4`},
		{"state", func(tb testing.TB) { aggregatetest.For(tb, tallies).When(bump{By: 3}).State(tally{N: 9}) }, `+   "N": 3`},
		{"version", func(tb testing.TB) { aggregatetest.For(tb, tallies).When(bump{By: 3}).Version(5) }, "version = 1, want 5"},
		{"error expected", func(tb testing.TB) { aggregatetest.For(tb, tallies).When(bump{By: 3}).Error(factum.CodeIllegalState) }, "want error IllegalState"},
		{"wrong code", func(tb testing.TB) {
			aggregatetest.For(tb, tallies).When(bump{By: 0}).Error(factum.CodeIllegalState)
		}, "got IllegalArgument"},
		{"types", func(tb testing.TB) { aggregatetest.For(tb, tallies).When(bump{By: 1}).EventTypes(secret{}) }, "aggregatetest_test.secret"},
		{"lossy event", func(tb testing.TB) { aggregatetest.For(tb, tallies).When(leak{}) }, "does not survive its JSON encoding"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := &recorder{TB: t}
			func() {
				defer func() { recover() }()
				c.run(r)
			}()
			if len(r.errs) == 0 {
				t.Fatal("the expectation did not fail")
			}
			if all := strings.Join(r.errs, "\n"); !strings.Contains(all, c.wants) {
				t.Fatalf("failure does not mention %q:\n%s", c.wants, all)
			}
		})
	}
}
