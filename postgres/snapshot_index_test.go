package postgres

import (
	"context"
	"strings"
	"testing"

	"github.com/factum-go/factum/internal/servicetest"
	"github.com/factum-go/factum/internal/sqlstore/sqlstoretest"
)

// TestSnapshotIndexesServeQueries creates the indexes SnapshotStore's
// documentation recommends, verbatim, and checks with EXPLAIN that
// PostgreSQL uses each for the statement Find runs.
func TestSnapshotIndexesServeQueries(t *testing.T) {
	ctx := context.Background()
	url, schema := servicetest.PostgresSchema(t)
	db := sqlstoretest.Must(Open(ctx, url, Options{Schema: schema}))(t)
	t.Cleanup(db.Close)
	st := sqlstoretest.Must(NewSnapshotStore(ctx, db, "shop"))(t)
	sqlstoretest.CheckIndexes(t, sqlstoretest.Indexes{
		Store: st, Find: st.core.FindStatement, Orders: 5000, Statuses: 2500,
		DDL: []string{`CREATE INDEX factum_shop_snapshots_status ON factum_shop_snapshots (aggregate,
	  (CASE WHEN jsonb_typeof(state -> 'status') = 'string' THEN state -> 'status' #>> '{}' END));`,
			`CREATE INDEX factum_shop_snapshots_status_c ON factum_shop_snapshots (aggregate,
	  (CASE WHEN jsonb_typeof(state -> 'status') = 'string' THEN state -> 'status' #>> '{}' END) COLLATE "C");`,
			`CREATE INDEX factum_shop_snapshots_total ON factum_shop_snapshots (aggregate,
	  (CASE WHEN jsonb_typeof(state -> 'total') = 'number' THEN (state -> 'total')::float8 END));`,
			`CREATE INDEX factum_shop_snapshots_event_time ON factum_shop_snapshots (aggregate, event_time DESC, aggregate_id);`,
			`ANALYZE factum_shop_snapshots`},
		Exec: db.executor(), Explain: "EXPLAIN", Columns: 1,
		Uses:       func(plan, index string) bool { return strings.Contains(plan, " "+index+" ") },
		Sorts:      func(plan string) bool { return strings.Contains(plan, "Sort") },
		RangeIndex: "factum_shop_snapshots_status_c",
	})
}
