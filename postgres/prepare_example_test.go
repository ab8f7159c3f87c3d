package postgres_test

import (
	"context"
	"log"

	"github.com/factum-go/factum/postgres"
	"github.com/factum-go/factum/prepare"
)

// Usernames reserved for good in PostgreSQL. It needs a running server, so
// this example is compiled but not run.
func ExampleNewPrepareBackend() {
	ctx := context.Background()
	db := openExample(ctx)
	defer db.Close()
	backend, err := postgres.NewPrepareBackend(ctx, db, postgres.PrepareOptions{})
	if err != nil {
		log.Fatal(err)
	}
	usernames, err := prepare.NewKey[string]("username", backend)
	if err != nil {
		log.Fatal(err)
	}
	if ok, err := usernames.Prepare(ctx, "alice", prepare.Forever("user-1")); err != nil || !ok {
		log.Fatal("username alice is taken: ", err)
	}
}
