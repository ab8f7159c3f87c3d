package postgres

import (
	"context"
	"sync"
	"testing"
	"testing/fstest"

	"github.com/factum-go/factum/internal/servicetest"
)

func TestMigrateConcurrentOpeners(t *testing.T) {
	url, schema := servicetest.PostgresSchema(t)
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
			db, err := Open(ctx, url, Options{Schema: schema})
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
	db, err := Open(ctx, url, Options{Schema: schema})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var n int
	if err := db.Pool().QueryRow(ctx, `SELECT count(*) FROM factum_migrations WHERE component = 'test'`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != 3 {
		t.Fatalf("%d migrations recorded, want 3", n)
	}
	if _, err := db.Pool().Exec(ctx, `INSERT INTO t_items (id, qty) VALUES ('a', 1)`); err != nil {
		t.Fatalf("migrated table unusable: %v", err)
	}
}

func TestOpenDownServerFailsFast(t *testing.T) {
	// Port 1 on loopback refuses connections at once.
	_, err := Open(context.Background(), "postgres://127.0.0.1:1/test?connect_timeout=2", Options{})
	if err == nil {
		t.Fatal("open of a down server succeeded")
	}
}
