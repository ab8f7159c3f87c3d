package projectiontest

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/event"
	"github.com/factum-go/factum/projection"
)

// Statements queued with Tx.Queue take effect in order with the
// function's own (a QueryRow after Queue reads the queued write), and a
// queued statement's failure is its stream's, wherever it surfaces: one
// stream's failing INSERT surfaces at the next stream's Exec (whose
// function rewords the error without %w), another's failing Check at the
// commit, and two fail behind other streams' statements sent in the same
// round trip (a column the table lacks, an argument the driver cannot
// encode: PostgreSQL's pipeline refuses those before running any). Exactly
// those four streams are recorded and passed; every other stream counts
// once.
func queuedFailuresAreTheirStreams(t *testing.T, st projection.Store) {
	log, want, all := appendLog(t, 30, 30)
	c := newCounts()
	badInsert, badCheck := all[3], all[15] // the second is last of its batch of 8
	// Each of these fails behind another stream's queued statement, in
	// the same round trip: one names a column the table lacks (the
	// server refuses to prepare it), one has an argument the driver
	// cannot encode.
	badColumn, badArg := all[22], all[26]
	upsert := `INSERT INTO ` + c.table + ` (aggregate_id, n) VALUES ($1, 1)
		ON CONFLICT (aggregate_id) DO UPDATE SET n = ` + c.table + `.n + 1`
	project := func(ctx context.Context, tx projection.Tx, s *factum.EventStream) error {
		i := slices.IndexFunc(all, func(a factum.EventStream) bool { return a.ID == s.ID })
		switch {
		case s.ID == badInsert.ID: // n is NOT NULL
			tx.Queue(projection.Statement{SQL: `INSERT INTO ` + c.table + ` (aggregate_id, n) VALUES ($1, NULL)`, Args: []any{s.AggregateID.ID}})
		case s.ID == badColumn.ID:
			tx.Queue(projection.Statement{SQL: `INSERT INTO ` + c.table + ` (aggregate_id, nope) VALUES ($1, 1)`, Args: []any{s.AggregateID.ID}})
		case s.ID == badArg.ID:
			tx.Queue(projection.Statement{SQL: upsert + ` WHERE ` + c.table + `.n <> $2`, Args: []any{s.AggregateID.ID, make(chan int)}})
		case s.ID == badCheck.ID:
			tx.Queue(projection.Statement{SQL: upsert, Args: []any{s.AggregateID.ID}, Check: func(int64) error {
				return factum.IllegalState("kit: the check refuses the row")
			}})
		case i%4 == 0: // a quarter write at once, after what is queued, and reword an error
			if _, err := tx.Exec(ctx, upsert, s.AggregateID.ID); err != nil {
				return fmt.Errorf("kit: %v", err)
			}
		case i%4 == 2: // a quarter queue, then read their own write back
			tx.Queue(projection.Statement{SQL: upsert, Args: []any{s.AggregateID.ID}})
			var n int
			if err := tx.QueryRow(ctx, `SELECT n FROM `+c.table+` WHERE aggregate_id = $1`, s.AggregateID.ID).Scan(&n); err != nil {
				return err
			}
			if n != 1 {
				return fmt.Errorf("kit: QueryRow after Queue reads n = %d, want 1 (the queued upsert first)", n)
			}
		default:
			tx.Queue(projection.Statement{SQL: upsert, Args: []any{s.AggregateID.ID}})
		}
		return nil
	}
	p, err := projection.New("shop", "queued", project, projection.Events("item_added"),
		projection.Setup(func(ctx context.Context, tx projection.Tx) error {
			_, err := tx.Exec(ctx, `CREATE TABLE IF NOT EXISTS `+c.table+` (aggregate_id TEXT PRIMARY KEY, n INTEGER NOT NULL)`)
			return err
		}))
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var recorded []event.Failure
	rec := event.FailureRecorderFunc(func(_ context.Context, f event.Failure) error {
		mu.Lock()
		defer mu.Unlock()
		recorded = append(recorded, f)
		return nil
	})
	drain(t, newRunner(t, p, projection.Config{Log: log, Store: st, Failures: rec, Attempts: 2, BatchSize: 8}))
	got := map[string]string{}
	for _, f := range recorded {
		got[f.Stream.ID] = fmt.Sprintf("%s attempts=%d", factum.CodeOf(f.Err), f.Attempts)
	}
	wantRecorded := map[string]string{
		badInsert.ID: fmt.Sprintf("%s attempts=2", factum.CodeOf(fmt.Errorf("any database error"))),
		badCheck.ID:  fmt.Sprintf("%s attempts=2", factum.CodeIllegalState),
		badColumn.ID: fmt.Sprintf("%s attempts=2", factum.CodeOf(fmt.Errorf("any database error"))),
		badArg.ID:    fmt.Sprintf("%s attempts=2", factum.CodeOf(fmt.Errorf("any driver error"))),
	}
	if fmt.Sprint(got) != fmt.Sprint(wantRecorded) || len(recorded) != len(wantRecorded) {
		t.Errorf("recorded %v (%d failures), want %v (stream 3 fails its INSERT, 15 its Check, 22 its column, 26 its argument)", got, len(recorded), wantRecorded)
	}
	for _, s := range []factum.EventStream{badInsert, badCheck, badColumn, badArg} {
		want[s.AggregateID.ID]--
	}
	if counts := c.read(t, st, ids(want)); fmt.Sprint(counts) != fmt.Sprint(want) {
		t.Errorf("counts %v, want %v", counts, want)
	}
}
