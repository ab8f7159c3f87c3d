package sqlite_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/factum-go/factum/internal/storebench"
	"github.com/factum-go/factum/snapshot"
	"github.com/factum-go/factum/sqlite"
)

// BenchmarkSnapshotSave: the version-guarded upsert with durable commits,
// from one goroutine and from 16, whose saves share transactions.
func BenchmarkSnapshotSave(b *testing.B) {
	storebench.SnapshotSave(b, func(b *testing.B) snapshot.Store { return newSnapshotStore(b, openSnapshotDB(b), "shop") })
}

// BenchmarkSnapshotList10k: a list query over 10,000 orders, without and
// with the documented expression index on state.status.
func BenchmarkSnapshotList10k(b *testing.B) {
	db := openSnapshotDB(b)
	st := newSnapshotStore(b, db, "shop")
	storebench.SnapshotList10k(b, st, func(b *testing.B) {
		for _, ddl := range []string{`CREATE INDEX factum_shop_snapshots_status ON factum_shop_snapshots (aggregate,
		  (CASE WHEN json_type(state, '$."status"') = 'text' THEN json_extract(state, '$."status"') END))`, "ANALYZE"} {
			if _, err := db.Writer().ExecContext(context.Background(), ddl); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkLoadAggregate10000 rebuilds a cart of 10,000 streams the way
// the aggregate processor loads one it has not cached: from version 1, or
// from its snapshot and the streams after it.
func BenchmarkLoadAggregate10000(b *testing.B) {
	ctx := context.Background()
	// synchronous=NORMAL only makes the set-up quicker; loads only read.
	db, err := sqlite.Open(ctx, filepath.Join(b.TempDir(), "load.db"), sqlite.Options{Synchronous: "NORMAL"})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { db.Close() })
	events, err := sqlite.NewEventStore(ctx, db, "shop", sqlite.EventStoreOptions{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { events.Close() })
	storebench.LoadAggregate10000(b, events, newSnapshotStore(b, db, "shop"))
}
