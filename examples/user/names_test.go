package user_test

import (
	"testing"

	"github.com/factum-go/factum/examples/user"
	"github.com/factum-go/factum/prepare"

	"github.com/factum-go/factum/aggregate"
	"github.com/factum-go/factum/aggregate/aggregatetest"
	"github.com/factum-go/factum/codec"
)

// The names the example's events and commands are stored under stay as
// they are: a Go rename that changed one fails here (update on purpose
// with go test -run TestStoredNames -update-names).
func TestStoredNames(t *testing.T) {
	names, err := user.Usernames(prepare.NewMemory(prepare.MemoryConfig{}))
	if err != nil {
		t.Fatal(err)
	}
	types, err := aggregate.NewRegistry(user.New(names))
	if err != nil {
		t.Fatal(err)
	}
	reg := codec.NewRegistry()
	if err := types.Register(reg); err != nil {
		t.Fatal(err)
	}
	aggregatetest.LockNames(t, reg, "testdata/names.golden")
}
