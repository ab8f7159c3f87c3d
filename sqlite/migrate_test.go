package sqlite

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/factum-go/factum/internal/sqlstore"
	"github.com/factum-go/factum/internal/sqlstore/sqlstoretest"
)

func TestMigrateConcurrentOpeners(t *testing.T) {
	path := filepath.Join(t.TempDir(), "m.db")
	// Each DB value is an independent connection pool, as a process would
	// have.
	sqlstoretest.MigrateConcurrently(t, func() (sqlstoretest.MigrationDB, error) {
		db, err := Open(context.Background(), path, Options{})
		if err != nil {
			return sqlstoretest.MigrationDB{}, err
		}
		return sqlstoretest.MigrationDB{Migrator: db, Exec: sqlstore.StdDB(db.Writer()), Close: func() { db.Close() }}, nil
	})
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
