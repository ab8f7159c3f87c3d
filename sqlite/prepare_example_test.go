package sqlite_test

import (
	"context"
	"fmt"
	"log"

	"github.com/factum-go/factum/prepare"
	"github.com/factum-go/factum/sqlite"
)

// Usernames reserved for good in an embedded database.
func ExampleNewPrepareBackend() {
	ctx := context.Background()
	db, done := openExample(ctx)
	defer done()

	backend, err := sqlite.NewPrepareBackend(ctx, db, sqlite.PrepareOptions{})
	if err != nil {
		log.Fatal(err)
	}
	usernames, err := prepare.NewKey[string]("username", backend)
	if err != nil {
		log.Fatal(err)
	}
	first, _ := usernames.Prepare(ctx, "alice", prepare.Forever("user-1"))
	second, _ := usernames.Prepare(ctx, "alice", prepare.Forever("user-2"))
	fmt.Println(first, second)
	// Output: true false
}
