package sqlite

import (
	"context"
	"io/fs"
	"path/filepath"
	"testing"
	"testing/fstest"

	"github.com/factum-go/factum"
)

// A database made by the event store's first schema, without the
// predecessor trigger, with a stream in it, opens and upgrades: the
// trigger is installed, the stored stream is read back, the aggregate's
// next version goes in after it, a gap is refused as a version conflict,
// and the refused row leaves no gap in the log's positions.
func TestEventStoreUpgradesTheFirstSchema(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "old.db")
	first, err := fs.ReadFile(migrations, "migrations/eventstore/0001_streams.sql")
	if err != nil {
		t.Fatal(err)
	}
	old, err := Open(ctx, path, Options{Synchronous: "NORMAL"})
	if err != nil {
		t.Fatal(err)
	}
	oldSchema := fstest.MapFS{"eventstore/0001_streams.sql": {Data: first}}
	if err := old.Migrate(ctx, oldSchema, "eventstore", "eventstore:shop", "factum_shop_"); err != nil {
		t.Fatal(err)
	}
	// The first schema's append, with its check in the statement.
	id := esShopCart.WithID("old-1")
	if _, err := old.Writer().ExecContext(ctx, `INSERT INTO factum_shop_streams (aggregate, aggregate_id, tenant, version, stream_id, command_id, request_id, owner_id, header, create_time, events)
		SELECT ?1, ?2, ?3, 1, ?4, ?5, 'req-1', '', NULL, 0, '[]'
		WHERE NOT EXISTS (SELECT 1 FROM factum_shop_streams WHERE aggregate = ?1 AND aggregate_id = ?2)`,
		id.Aggregate, id.ID, id.Tenant, factum.NewID(), factum.NewID()); err != nil {
		t.Fatal(err)
	}
	if err := old.Close(); err != nil {
		t.Fatal(err)
	}

	db, err := Open(ctx, path, Options{Synchronous: "NORMAL"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	st := newTestEventStore(t, db, "shop", EventStoreOptions{})
	var triggers int
	if err := db.Reader().QueryRowContext(ctx, `SELECT count(*) FROM sqlite_master WHERE type = 'trigger' AND name = 'factum_shop_streams_predecessor'`).Scan(&triggers); err != nil {
		t.Fatal(err)
	}
	if triggers != 1 {
		t.Fatalf("predecessor triggers after the upgrade: %d, want 1", triggers)
	}
	if err := st.Append(ctx, testStream(id, 3, "req-3")); factum.CodeOf(err) != factum.CodeEventVersionConflict {
		t.Fatalf("append of a gap: %v, want %s", err, factum.CodeEventVersionConflict)
	}
	if err := st.Append(ctx, testStream(id, 2, "req-2")); err != nil {
		t.Fatal(err)
	}
	log, err := st.ReadLog(ctx, factum.Position{}, 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(log) != 2 || log[0].Version != 1 || log[1].Version != 2 {
		t.Fatalf("log after the upgrade: %d streams %v, want versions 1 and 2", len(log), log)
	}
	if log[0].Position.Seq != 1 || log[1].Position.Seq != 2 {
		t.Fatalf("positions %v and %v, want 1 and 2 (a refused row took none)", log[0].Position, log[1].Position)
	}
}

// The predecessor check belongs to the table: a row written by other
// means than the store's append, with no version before it, is dropped.
func TestEventStorePredecessorTrigger(t *testing.T) {
	ctx := context.Background()
	db := newTestDB(t, Options{Synchronous: "NORMAL"})
	newTestEventStore(t, db, "shop", EventStoreOptions{})
	insert := `INSERT INTO factum_shop_streams (aggregate, aggregate_id, tenant, version, stream_id, command_id, request_id, owner_id, header, create_time, events)
		VALUES ('cart', 'c-1', ?1, ?2, ?3, 'cmd', ?3, '', NULL, 0, '[]')`
	for _, c := range []struct {
		tenant  string
		version int
		want    int64
	}{
		{"", 2, 0},  // no version 1
		{"", 1, 1},  // a create needs none
		{"t", 2, 0}, // version 1 is another tenant's
		{"", 3, 0},  // a gap
		{"", 2, 1},
	} {
		res, err := db.Writer().ExecContext(ctx, insert, c.tenant, c.version, factum.NewID())
		if err != nil {
			t.Fatal(err)
		}
		if n, _ := res.RowsAffected(); n != c.want {
			t.Errorf("tenant %q version %d: %d rows inserted, want %d", c.tenant, c.version, n, c.want)
		}
	}
}
