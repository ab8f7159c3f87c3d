package postgres_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/internal/sqlstore/sqlstoretest"
	"github.com/factum-go/factum/postgres"
)

func newCheckpointStore(t testing.TB, db *postgres.DB, boundedContext string) *postgres.CheckpointStore {
	return sqlstoretest.Must(postgres.NewCheckpointStore(context.Background(), db, boundedContext))(t)
}

func TestCheckpointStoreRefusesLongContext(t *testing.T) {
	db := openSnapshotDB(t)
	long := "c" + strings.Repeat("x", 44)
	if _, err := postgres.NewCheckpointStore(context.Background(), db, long); !errors.Is(err, factum.ErrIllegalArgument) {
		t.Errorf("context of %d bytes: %v, want IllegalArgument", len(long), err)
	}
	if _, err := postgres.NewSnapshotStore(context.Background(), db, long); !errors.Is(err, factum.ErrIllegalArgument) {
		t.Errorf("snapshot store, context of %d bytes: %v, want IllegalArgument", len(long), err)
	}
	newCheckpointStore(t, db, long[:44])
	newSnapshotStore(t, db, long[:44])
}
