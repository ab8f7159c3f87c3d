package postgres

import (
	"context"
	"testing"

	"github.com/factum-go/factum/internal/servicetest"
	"github.com/factum-go/factum/internal/sqlstore/sqlstoretest"
)

func TestMigrateConcurrentOpeners(t *testing.T) {
	url, schema := servicetest.PostgresSchema(t)
	sqlstoretest.MigrateConcurrently(t, func() (sqlstoretest.MigrationDB, error) {
		db, err := Open(context.Background(), url, Options{Schema: schema})
		if err != nil {
			return sqlstoretest.MigrationDB{}, err
		}
		return sqlstoretest.MigrationDB{Migrator: db, Exec: db.executor(), Close: db.Close}, nil
	})
}

func TestOpenDownServerFailsFast(t *testing.T) {
	// Port 1 on loopback refuses connections at once.
	_, err := Open(context.Background(), "postgres://127.0.0.1:1/test?connect_timeout=2", Options{})
	if err == nil {
		t.Fatal("open of a down server succeeded")
	}
}
