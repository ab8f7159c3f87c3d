package sqlite_test

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/factum-go/factum/prepare/preparetest"
	"github.com/factum-go/factum/sqlite"
)

// Each pair is two commits on the single write connection; with FULL each
// commit waits for fsync.
func BenchmarkSQLitePrepareRollback(b *testing.B) {
	for _, sync := range []string{"FULL", "NORMAL"} {
		for _, g := range []int{1, 32} {
			b.Run(fmt.Sprintf("sync=%s/goroutines=%d", sync, g), func(b *testing.B) {
				db, err := sqlite.Open(context.Background(), filepath.Join(b.TempDir(), "bench.db"), sqlite.Options{Synchronous: sync})
				if err != nil {
					b.Fatal(err)
				}
				defer db.Close()
				preparetest.BenchPrepareRollback(b, newPrepareBackend(b, db, sqlite.PrepareOptions{}), g)
			})
		}
	}
}
