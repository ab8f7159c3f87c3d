package sqlite

import (
	"context"
	"path/filepath"
	"sync"
	"testing"
	"testing/fstest"
)

func TestMigrateConcurrentOpeners(t *testing.T) {
	path := filepath.Join(t.TempDir(), "m.db")
	fsys := fstest.MapFS{
		"m/0001_init.sql":  {Data: []byte(`CREATE TABLE {{prefix}}items (id TEXT PRIMARY KEY);`)},
		"m/0002_index.sql": {Data: []byte(`ALTER TABLE {{prefix}}items ADD COLUMN qty INTEGER NOT NULL DEFAULT 0;`)},
	}
	ctx := context.Background()
	// Two DB values are two independent connection pools, as two processes
	// would have.
	var wg sync.WaitGroup
	errs := make([]error, 4)
	for i := range errs {
		wg.Go(func() {
			db, err := Open(ctx, path, Options{})
			if err != nil {
				errs[i] = err
				return
			}
			defer db.Close()
			errs[i] = db.Migrate(ctx, fsys, "m", "test", "t_")
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	db, err := Open(ctx, path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var n int
	if err := db.Reader().QueryRow(`SELECT count(*) FROM factum_migrations WHERE component = 'test'`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != 2 {
		t.Fatalf("%d migrations recorded, want 2", n)
	}
	if _, err := db.Writer().Exec(`INSERT INTO t_items (id, qty) VALUES ('a', 1)`); err != nil {
		t.Fatalf("migrated table unusable: %v", err)
	}
}

func TestOpenRefusesBadInput(t *testing.T) {
	ctx := context.Background()
	if _, err := Open(ctx, "", Options{}); err == nil {
		t.Fatal("empty path accepted")
	}
	if _, err := Open(ctx, filepath.Join(t.TempDir(), "x.db"), Options{Synchronous: "OFF"}); err == nil {
		t.Fatal("synchronous OFF accepted")
	}
}
