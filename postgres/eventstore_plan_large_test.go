package postgres

import (
	"context"
	"fmt"
	"testing"

	"github.com/factum-go/factum/internal/sqlstore"
)

// largeLogStreams is how many streams the read-path plan test writes: the
// plans that went wrong did so only once the table held a few hundred
// thousand rows.
const largeLogStreams = 200_000

// Every statement on the consumer and read paths of the event store and the
// snapshot store, over a log of largeLogStreams streams, probes an index,
// both as a generic plan (prepared statements after a few executions) and
// as a custom one. A scan here costs every consumer wait or read a pass
// over the whole table.
func TestReadPlansProbeTheIndexOnALargeLog(t *testing.T) {
	if testing.Short() {
		t.Skip("writes 200,000 streams")
	}
	db := newTestDB(t, 4)
	st := newTestEventStore(t, db, "shop", EventStoreOptions{})
	snaps, err := NewSnapshotStore(context.Background(), db, "shop")
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	// Four transactions, so the log holds several tx values; four streams
	// per aggregate.
	for part := range 4 {
		_, err := db.Pool().Exec(ctx, fmt.Sprintf(`INSERT INTO %s
			(aggregate, aggregate_id, tenant, version, stream_id, command_id, request_id, owner_id, header, create_time, events)
			SELECT 'cart', 'a' || (i / 4), 'default', (i %% 4) + 1, 's' || i, 'c' || i, 'r' || i, '', NULL,
				now() - (i || ' ms')::interval, '[]'
			FROM generate_series(%d, %d) AS i`, st.table, part*largeLogStreams/4, (part+1)*largeLogStreams/4-1))
		if err != nil {
			t.Fatal(err)
		}
	}
	_, err = db.Pool().Exec(ctx, `INSERT INTO `+snaps.table+` (aggregate, `+sqlstore.SnapshotColumns+`)
		SELECT 'cart', 'a' || i, 'default', '', 4, 'e' || i, '', '', 0, 0, 0, false, '{}'
		FROM generate_series(0, $1::int) AS i`, largeLogStreams/4-1)
	if err != nil {
		t.Fatal(err)
	}
	for _, table := range []string{st.table, snaps.table} {
		if _, err := db.Pool().Exec(ctx, `ANALYZE `+table); err != nil {
			t.Fatal(err)
		}
	}
	var endTx, endSeq, midTx, midSeq string
	if err := db.Pool().QueryRow(ctx, `SELECT tx::text, seq::text FROM `+st.table+` ORDER BY tx DESC, seq DESC LIMIT 1`).Scan(&endTx, &endSeq); err != nil {
		t.Fatal(err)
	}
	if err := db.Pool().QueryRow(ctx, `SELECT tx::text, seq::text FROM `+st.table+` ORDER BY tx, seq OFFSET $1 LIMIT 1`, largeLogStreams/2).Scan(&midTx, &midSeq); err != nil {
		t.Fatal(err)
	}
	pos := func(tx, seq string) string { return "'" + tx + "', " + seq }

	cases := []struct{ name, sql, args, table string }{
		{"load", st.reads.LoadSQL, `'cart', 'a100', 1, 10`, "streams"},
		{"load by time", st.reads.LoadByTimeSQL, `'cart', 'a100', now() - interval '1 hour', now()`, "streams"},
		{"lookup", st.reads.LookupSQL, `'cart', 'a100', 'r400', 'default'`, "streams"},
		{"request exists", st.reads.RequestExistsSQL, `'cart', 'a100', 'r400', 'default'`, "streams"},
		{"scan", st.reads.ScanSQL, `'cart', 'a100', 100`, "streams"},
		{"read log from the start", st.q.readLog, `'0', 0, 1000`, "streams"},
		{"read log from the middle", st.q.readLog, pos(midTx, midSeq) + `, 1000`, "streams"},
		{"read log at the end", st.q.readLog, pos(endTx, endSeq) + `, 1000`, "streams"},
		{"log state at the end", st.q.logState, pos(endTx, endSeq), "streams"},
		{"log state in the middle", st.q.logState, pos(midTx, midSeq), "streams"},
		{"snapshot tenant", snaps.core.TenantSQL, `'cart', 'a100'`, "snapshots"},
		{"snapshot load", snaps.core.LoadSQL, `'cart', 'a100'`, "snapshots"},
		{"snapshot save", snaps.core.UpsertSQL, `'cart', 'a100', 'default', '', 5, 'e', '', '', 0, 0, 0, false, '{}'`, "snapshots"},
	}
	for _, mode := range []string{"force_generic_plan", "force_custom_plan"} {
		t.Run(mode, func(t *testing.T) {
			pc, err := db.Pool().Acquire(ctx)
			if err != nil {
				t.Fatal(err)
			}
			conn := pc.Hijack()
			t.Cleanup(func() { conn.Close(context.Background()) })
			if _, err := conn.Exec(ctx, `SET plan_cache_mode = `+mode); err != nil {
				t.Fatal(err)
			}
			for i, c := range cases {
				t.Run(c.name, func(t *testing.T) {
					got := probesOnly(t, conn, fmt.Sprintf("large_plan_%d", i), c.sql, c.args, c.table)
					// An upsert's plan names its arbiter index apart
					// from the nodes; it reads no other.
					if len(got) == 0 && c.sql != snaps.core.UpsertSQL {
						t.Errorf("the plan reads no index")
					}
				})
			}
		})
	}
}
