// Package compensationtest makes engines with compensation bound by hand,
// as the tests of several packages need them: New, the execution type,
// the failure recorder and Bind, but no scheduler goroutine (which
// compensation.Component would run), so that each test drives its own.
package compensationtest

import (
	"testing"

	"github.com/factum-go/factum/aggregate"
	"github.com/factum-go/factum/compensation"
	"github.com/factum-go/factum/engine"
	"github.com/factum-go/factum/internal/enginetest"
	"github.com/factum-go/factum/snapshot"
)

// New makes the compensation of cc and an engine of ec and types, and
// binds them. The engine gets the execution aggregate type beside types
// and, where ec leaves them unset, the compensation as its failure
// recorder and cc's snapshot store; cc gets a memory snapshot store where
// it has none. It fails t on any error.
func New(t testing.TB, cc compensation.Config, ec engine.Config, types ...aggregate.Type) (*engine.Engine, *compensation.Compensation) {
	t.Helper()
	if cc.Snapshots == nil {
		cc.Snapshots = snapshot.NewMemory()
	}
	comp, err := compensation.New(cc)
	if err != nil {
		t.Fatal(err)
	}
	if ec.Failures == nil {
		ec.Failures = comp
	}
	if ec.SnapshotStore == nil && ec.Storage == nil {
		ec.SnapshotStore = cc.Snapshots
	}
	eng, err := engine.New(ec, append(types, comp.Type())...)
	if err != nil {
		t.Fatal(err)
	}
	if err := comp.Bind(eng); err != nil {
		t.Fatal(err)
	}
	return eng, comp
}

// Start is New, and runs the engine for the length of the test
// (enginetest.Run).
func Start(t testing.TB, cc compensation.Config, ec engine.Config, types ...aggregate.Type) (*engine.Engine, *compensation.Compensation) {
	t.Helper()
	eng, comp := New(t, cc, ec, types...)
	enginetest.Run(t, eng)
	return eng, comp
}
