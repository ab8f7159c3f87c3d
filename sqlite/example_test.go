package sqlite_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/factum-go/factum/sqlite"
)

func ExampleOpen() {
	dir, _ := os.MkdirTemp("", "factum-example")
	defer os.RemoveAll(dir)
	db, err := sqlite.Open(context.Background(), filepath.Join(dir, "data", "factum.db"), sqlite.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer db.Close()
	fmt.Println(filepath.Base(db.Path()))
	// Output: factum.db
}

// openExample opens a database in a new temporary folder, as ExampleOpen
// does, for the other examples; done closes it and removes the folder. It
// panics if it cannot: the examples are about what comes after.
func openExample(ctx context.Context) (db *sqlite.DB, done func()) {
	dir, err := os.MkdirTemp("", "factum-example")
	if err != nil {
		panic(err)
	}
	db, err = sqlite.Open(ctx, filepath.Join(dir, "factum.db"), sqlite.Options{})
	if err != nil {
		os.RemoveAll(dir)
		panic(err)
	}
	return db, func() {
		db.Close()
		os.RemoveAll(dir)
	}
}
