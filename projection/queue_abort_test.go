package projection_test

import (
	"context"
	"testing"
	"time"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/eventstore"
	"github.com/factum-go/factum/postgres"
	"github.com/factum-go/factum/projection"
)

// A function that fails on the driver's own transaction (a statement run
// on postgres.PgxTx, which aborts the PostgreSQL transaction) while an
// earlier stream's statements are still queued is charged itself: the
// runner does not run the queue in the aborted transaction to find a
// queued failure, which would charge the earlier, innocent stream and lose
// its effects.
func TestADirectFailureIsTheFailingStreamsNotTheQueuedOnes(t *testing.T) {
	_, ps := openPostgres(t)
	ctx := context.Background()
	log := eventstore.NewMemory()
	var streams []factum.EventStream
	for i, id := range []string{"cart-a", "cart-b", "cart-c"} {
		s := itemAddedStream(carts.WithID(id), 1)
		if err := log.Append(ctx, &s); err != nil {
			t.Fatalf("stream %d: %v", i, err)
		}
		streams = append(streams, s)
	}
	bad := streams[1]
	p, err := projection.New("shop", "direct_failure",
		func(ctx context.Context, tx projection.Tx, s *factum.EventStream) error {
			if s.ID == bad.ID {
				raw, ok := postgres.PgxTx(tx)
				if !ok {
					t.Error("no pgx.Tx behind the projection's transaction")
					return factum.IllegalState("no pgx.Tx")
				}
				_, err := raw.Exec(ctx, `SELECT 1/0`)
				return err
			}
			tx.Queue(projection.Statement{SQL: `INSERT INTO direct_items (cart) VALUES ($1)`, Args: []any{s.AggregateID.ID}})
			return nil
		},
		projection.From(carts),
		projection.Setup(func(ctx context.Context, tx projection.Tx) error {
			_, err := tx.Exec(ctx, `CREATE TABLE IF NOT EXISTS direct_items (cart TEXT PRIMARY KEY)`)
			return err
		}),
	)
	if err != nil {
		t.Fatal(err)
	}
	recorded, finished := runToTheEnd(t, p, projection.Config{Log: log, Store: ps, Attempts: 1, BatchSize: 8,
		Backoff: time.Millisecond, PollInterval: 10 * time.Millisecond})
	if !finished {
		t.Fatal("the runner did not finish the log")
	}
	if len(recorded) != 1 || recorded[0].Stream.ID != bad.ID {
		var got []string
		for _, f := range recorded {
			got = append(got, f.Stream.AggregateID.ID)
		}
		t.Fatalf("failures recorded for %v, want only cart-b", got)
	}
	tx, err := ps.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = tx.Rollback(ctx) }()
	for _, id := range []string{"cart-a", "cart-c"} {
		var n int
		if err := tx.QueryRow(ctx, `SELECT count(*) FROM direct_items WHERE cart = $1`, id).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n != 1 {
			t.Errorf("%s is in the read model %d times, want 1", id, n)
		}
	}
}
