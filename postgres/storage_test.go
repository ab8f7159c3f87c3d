package postgres_test

import (
	"context"
	"testing"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/postgres"
)

// The storage contract and the closing of a DB's stores are among the
// shared SQL tests (TestSQLStores).

func TestOpenTakesAtMostOneOptions(t *testing.T) {
	_, err := postgres.Open(context.Background(), "postgres://127.0.0.1:1/x", postgres.Options{}, postgres.Options{})
	if factum.CodeOf(err) != factum.CodeIllegalArgument {
		t.Fatalf("Open with two Options: %v, want IllegalArgument", err)
	}
}
