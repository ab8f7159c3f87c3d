package sqlstoretest

import (
	"context"
	"sync"
	"testing"
	"testing/fstest"

	"github.com/factum-go/factum/internal/sqlstore"
)

// MigrationDB is a connection to a database, as a process of its own
// would have: the migrator, an executor of statements, and its close.
type MigrationDB struct {
	Migrator sqlstore.Migrator
	Exec     sqlstore.Executor
	Close    func()
}

// MigrateConcurrently has four connections to one database, opened by
// open, apply the same migrations at once: each file is applied once,
// recorded once, and the tables work.
func MigrateConcurrently(t *testing.T, open func() (MigrationDB, error)) {
	fsys := fstest.MapFS{
		"m/0001_init.sql":  {Data: []byte(`CREATE TABLE {{prefix}}items (id TEXT PRIMARY KEY);`)},
		"m/0002_more.sql":  {Data: []byte(`ALTER TABLE {{prefix}}items ADD COLUMN qty INTEGER NOT NULL DEFAULT 0;`)},
		"m/0003_index.sql": {Data: []byte(`CREATE INDEX {{prefix}}items_qty ON {{prefix}}items (qty);`)},
	}
	ctx := context.Background()
	var wg sync.WaitGroup
	errs := make([]error, 4)
	for i := range errs {
		wg.Go(func() {
			db, err := open()
			if err != nil {
				errs[i] = err
				return
			}
			defer db.Close()
			errs[i] = db.Migrator.Migrate(ctx, fsys, "m", "test", "t_")
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	db, err := open()
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var n int
	if err := db.Exec.QueryRow(ctx, `SELECT count(*) FROM factum_migrations WHERE component = 'test'`).Scan(&n); err != nil || n != 3 {
		t.Fatalf("%d migrations recorded (%v), want 3", n, err)
	}
	if _, err := db.Exec.Exec(ctx, `INSERT INTO t_items (id, qty) VALUES ('a', 1)`); err != nil {
		t.Fatalf("migrated table unusable: %v", err)
	}
}
