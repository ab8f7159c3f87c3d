package postgres_test

import (
	"context"
	"log"

	"github.com/factum-go/factum/postgres"
)

// Open needs a running server, so this example is compiled but not run.
func ExampleOpen() {
	db, err := postgres.Open(context.Background(),
		"postgres://postgres@127.0.0.1:5432/test?sslmode=disable",
		postgres.Options{Schema: "factum"})
	if err != nil {
		log.Fatal(err) // a down server is reported within ConnectTimeout
	}
	defer db.Close()
}

// openExample opens the database ExampleOpen does, for the other examples;
// the caller closes it.
func openExample(ctx context.Context) *postgres.DB {
	db, err := postgres.Open(ctx, "postgres://postgres@127.0.0.1:5432/test?sslmode=disable",
		postgres.Options{Schema: "factum"})
	if err != nil {
		log.Fatal(err)
	}
	return db
}
