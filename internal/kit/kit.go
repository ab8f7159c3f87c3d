// Package kit holds what factum's contract kits (eventstoretest,
// snapshottest, preparetest, idempotencytest, projectiontest, querytest,
// bustest) share: names and aggregates unique to one case, so that cases
// sharing a store never see each other's data, the checks of factum errors and JSON
// documents their cases make, the running of their case tables, and the
// race of a late write against the end of its lease (LateWrite).
package kit

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"testing"

	"github.com/factum-go/factum"
)

// UniqueName returns prefix followed by eight characters derived from the
// test's name and a fresh ID: a name no other case, nor another run of the
// same case, uses.
func UniqueName(t testing.TB, prefix string) string {
	return prefix + factum.DeriveID(t.Name(), factum.NewID())[:8]
}

// Fixture makes identities unique to one case: the aggregates of one
// type, in the bounded context "kit", named after the case, so that cases
// sharing a store never see each other's aggregates.
type Fixture struct {
	// Named is the case's aggregate type: context "kit", a name no other
	// case uses.
	Named factum.NamedAggregate
}

// NewFixture returns the fixture of t's case, whose aggregate type is
// prefix followed by a UniqueName.
func NewFixture(t *testing.T, prefix string) Fixture {
	t.Helper()
	return Fixture{Named: factum.NamedAggregate{Context: "kit", Aggregate: UniqueName(t, prefix)}}
}

// ID returns the aggregate of the case's type called id.
func (f Fixture) ID(id string) factum.AggregateID { return f.Named.WithID(id) }

// CodeMismatch returns nil when err is a *factum.Error of code that
// errors.Is also matches with code's sentinel, and otherwise an error
// saying how err differs.
func CodeMismatch(err error, code factum.Code) error {
	if err == nil {
		return fmt.Errorf("got no error, want %s", code)
	}
	var fe *factum.Error
	if !errors.As(err, &fe) || fe.Code != code {
		return fmt.Errorf("got %v, want code %s", err, code)
	}
	if !errors.Is(err, code.Err()) {
		return fmt.Errorf("errors.Is(%v, sentinel of %s) is false", err, code)
	}
	return nil
}

// WantCode fails t unless err is a *factum.Error of code that errors.Is
// also matches with code's sentinel (see [CodeMismatch]), and returns it.
func WantCode(t testing.TB, err error, code factum.Code) *factum.Error {
	t.Helper()
	if m := CodeMismatch(err, code); m != nil {
		t.Fatal(m)
	}
	var fe *factum.Error
	errors.As(err, &fe)
	return fe
}

// JSONEqual reports whether two JSON documents hold the same value, so
// that a store keeping JSON in a normalised form (jsonb) is judged by
// content. A document that does not parse equals nothing.
func JSONEqual(a, b []byte) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	return reflect.DeepEqual(x, y)
}

// Case is one case of a kit: the name of its subtest and what it runs
// against a store (or whatever the kit tests) of type S.
type Case[S any] struct {
	Name string
	Run  func(*testing.T, S)
	// Serial keeps the case out of the parallel ones: a case that acts on
	// the whole backend or on time (it purges, holds the backend's lock,
	// or waits for real expiries) runs alone, before them, so that
	// parallel cases neither disturb it nor stretch its waits.
	Serial bool
}

// RunParallel runs each case as a subtest against what open returns for
// it: the Serial ones one after another, then the others in parallel
// (t.Parallel) with each other. open is called in the subtest, so from
// several goroutines, and may skip it.
func RunParallel[S any](t *testing.T, open func(*testing.T) S, cases []Case[S]) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.Name, func(t *testing.T) {
			if !c.Serial {
				t.Parallel()
			}
			c.Run(t, open(t))
		})
	}
}
