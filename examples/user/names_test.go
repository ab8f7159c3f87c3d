package user_test

import (
	"testing"

	"github.com/factum-go/factum/aggregate/aggregatetest"
	"github.com/factum-go/factum/examples/user"
	"github.com/factum-go/factum/prepare"
)

// The names the example's events and commands are stored under stay as
// they are: a Go rename that changed one fails here (update on purpose
// with go test -run TestStoredNames -update-names).
func TestStoredNames(t *testing.T) {
	names, err := user.Usernames(prepare.NewMemory(prepare.MemoryConfig{}))
	if err != nil {
		t.Fatal(err)
	}
	aggregatetest.LockTypeNames(t, "testdata/names.golden", user.New(names))
}
