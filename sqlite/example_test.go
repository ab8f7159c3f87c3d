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
