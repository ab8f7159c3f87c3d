package sqlite

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/factum-go/factum/internal/sqlstore"
	"github.com/factum-go/factum/internal/sqlstore/sqlstoretest"
)

// TestSnapshotIndexesServeQueries creates the indexes SnapshotStore's
// documentation recommends, verbatim, and checks with EXPLAIN QUERY PLAN
// that SQLite uses each for the statement Find runs.
func TestSnapshotIndexesServeQueries(t *testing.T) {
	ctx := context.Background()
	db := sqlstoretest.Closed(Open(ctx, filepath.Join(t.TempDir(), "indexes.db"), Options{Synchronous: "NORMAL"}))(t)
	st := sqlstoretest.Must(NewSnapshotStore(ctx, db, "shop"))(t)
	sqlstoretest.CheckIndexes(t, sqlstoretest.Indexes{
		Store: st, Find: st.core.FindStatement, Orders: 2000, Statuses: 1000,
		DDL: []string{`CREATE INDEX factum_shop_snapshots_status ON factum_shop_snapshots (aggregate,
	  (CASE WHEN json_type(state, '$."status"') = 'text' THEN json_extract(state, '$."status"') END));`,
			`CREATE INDEX factum_shop_snapshots_total ON factum_shop_snapshots (aggregate,
	  (CASE WHEN json_type(state, '$."total"') IN ('integer', 'real') THEN json_extract(state, '$."total"') END));`,
			`CREATE INDEX factum_shop_snapshots_event_time ON factum_shop_snapshots (aggregate, event_time DESC, aggregate_id);`,
			`ANALYZE`},
		Exec: sqlstore.StdDB(db.Writer()), Explain: "EXPLAIN QUERY PLAN", Columns: 4,
		Uses:       func(plan, index string) bool { return strings.Contains(plan, "INDEX "+index+" ") },
		Sorts:      func(plan string) bool { return strings.Contains(plan, "TEMP B-TREE") },
		RangeIndex: "factum_shop_snapshots_status",
	})
}
