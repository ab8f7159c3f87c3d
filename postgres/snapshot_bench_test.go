package postgres_test

import (
	"testing"

	"github.com/factum-go/factum/internal/servicetest"
	"github.com/factum-go/factum/internal/sqlstore/sqlstoretest"
)

// benchStores opens a fresh schema.
func benchStores(t testing.TB) sqlstoretest.Stores {
	url, schema := servicetest.PostgresSchema(t)
	return storesIn(t, url, schema)
}

// BenchmarkSnapshotSave: the version-guarded upsert, one statement and
// durable commit each, from one goroutine and from 16.
func BenchmarkSnapshotSave(b *testing.B) { sqlstoretest.BenchSnapshotSave(b, benchStores) }

// BenchmarkSnapshotList10k: a list query over 10,000 orders, without and
// with the documented expression index on state.status.
func BenchmarkSnapshotList10k(b *testing.B) {
	sqlstoretest.BenchSnapshotList10k(b, benchStores, `CREATE INDEX factum_shop_snapshots_status ON factum_shop_snapshots (aggregate,
		  (CASE WHEN jsonb_typeof(state -> 'status') = 'string' THEN state -> 'status' #>> '{}' END))`, "ANALYZE factum_shop_snapshots")
}

// BenchmarkLoadAggregate10000 rebuilds a cart of 10,000 streams the way
// the aggregate processor loads one it has not cached: from version 1, or
// from its snapshot and the streams after it.
func BenchmarkLoadAggregate10000(b *testing.B) { sqlstoretest.BenchLoadAggregate10000(b, benchStores) }
