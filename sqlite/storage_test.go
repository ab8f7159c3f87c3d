package sqlite_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/sqlite"
)

// The storage contract and the closing of a DB's stores are among the
// shared SQL tests (TestSQLStores).

func TestOpenTakesAtMostOneOptions(t *testing.T) {
	_, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "x.db"), sqlite.Options{}, sqlite.Options{})
	if factum.CodeOf(err) != factum.CodeIllegalArgument {
		t.Fatalf("Open with two Options: %v, want IllegalArgument", err)
	}
}
