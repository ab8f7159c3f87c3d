package compensation_test

import (
	"testing"

	"github.com/factum-go/factum/aggregate/aggregatetest"
	"github.com/factum-go/factum/compensation"
	"github.com/factum-go/factum/snapshot"
)

// The execution aggregate's stored names stay as they are whatever its Go
// types are called (update on purpose with go test -run TestStoredNames
// -update-names).
func TestStoredNames(t *testing.T) {
	comp, err := compensation.New(compensation.Config{Context: "shop", Snapshots: snapshot.NewMemory()})
	if err != nil {
		t.Fatal(err)
	}
	aggregatetest.LockTypeNames(t, "testdata/names.golden", comp.Type())
}
