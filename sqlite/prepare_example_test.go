package sqlite_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/factum-go/factum/prepare"
	"github.com/factum-go/factum/sqlite"
)

// Usernames reserved for good in an embedded database.
func ExampleNewPrepareBackend() {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "factum-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	db, err := sqlite.Open(ctx, filepath.Join(dir, "app.db"), sqlite.Options{})
	if err != nil {
		log.Fatal(err)
	}
	defer db.Close()

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
