// Package compensationtest makes engines with compensation bound by hand,
// as the tests of several packages need them: New, the execution type,
// the failure recorder and Bind, but no scheduler goroutine (which
// compensation.Component would run), so that each test drives its own.
package compensationtest

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/factum-go/factum/aggregate"
	"github.com/factum-go/factum/compensation"
	"github.com/factum-go/factum/engine"
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

// Start is New, and starts the engine until t's clean-up, which fails t if
// the engine does not shut down within 30 s.
func Start(t testing.TB, cc compensation.Config, ec engine.Config, types ...aggregate.Type) (*engine.Engine, *compensation.Compensation) {
	t.Helper()
	eng, comp := New(t, cc, ec, types...)
	if err := eng.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := eng.Shutdown(ctx); err != nil && !errors.Is(err, engine.ErrStopped) {
			t.Errorf("shutdown: %v", err)
		}
	})
	return eng, comp
}
