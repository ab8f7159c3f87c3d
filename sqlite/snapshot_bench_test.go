package sqlite_test

import (
	"path/filepath"
	"testing"

	"github.com/factum-go/factum/internal/sqlstore/sqlstoretest"
)

// benchStores opens a fresh database file with durable commits.
func benchStores(t testing.TB) sqlstoretest.Stores {
	return storesAt(t, filepath.Join(t.TempDir(), "bench.db"), "FULL")
}

// BenchmarkSnapshotSave: the version-guarded upsert with durable commits,
// from one goroutine and from 16, whose saves share transactions.
func BenchmarkSnapshotSave(b *testing.B) { sqlstoretest.BenchSnapshotSave(b, benchStores) }

// BenchmarkSnapshotList10k: a list query over 10,000 orders, without and
// with the documented expression index on state.status.
func BenchmarkSnapshotList10k(b *testing.B) {
	sqlstoretest.BenchSnapshotList10k(b, benchStores, `CREATE INDEX factum_shop_snapshots_status ON factum_shop_snapshots (aggregate,
		  (CASE WHEN json_type(state, '$."status"') = 'text' THEN json_extract(state, '$."status"') END))`, "ANALYZE")
}

// BenchmarkLoadAggregate10000 rebuilds a cart of 10,000 streams the way
// the aggregate processor loads one it has not cached: from version 1, or
// from its snapshot and the streams after it. (synchronous=NORMAL only
// makes the set-up quicker; loads only read.)
func BenchmarkLoadAggregate10000(b *testing.B) {
	sqlstoretest.BenchLoadAggregate10000(b, func(t testing.TB) sqlstoretest.Stores {
		return storesAt(t, filepath.Join(t.TempDir(), "load.db"), "NORMAL")
	})
}
