package projection_test

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/command"
	"github.com/factum-go/factum/compensation"
	"github.com/factum-go/factum/engine"
	"github.com/factum-go/factum/projection"
)

// versionedItems counts each cart's items in its Schema'd table "items";
// a stream whose event says Fail fails while fail holds.
func versionedItems(t *testing.T, fail *atomic.Bool) *projection.Projection {
	t.Helper()
	p, err := projection.New("shop", "items",
		func(ctx context.Context, tx projection.Tx, s *factum.EventStream) error {
			if fail.Load() && strings.Contains(string(s.Events[0].Body), "true") {
				return factum.Errorf(factum.CodeIllegalState, "cart %s refused", s.AggregateID.ID)
			}
			tbl := tx.Table("items")
			_, err := tx.Exec(ctx, `INSERT INTO `+tbl+` (tenant, cart, items) VALUES ($1, $2, 1)
				ON CONFLICT (tenant, cart) DO UPDATE SET items = `+tbl+`.items + 1`, s.AggregateID.TenantOrDefault(), s.AggregateID.ID)
			return err
		},
		projection.From(carts),
		projection.Schema(1, "items"),
		projection.Setup(func(ctx context.Context, tx projection.Tx) error {
			_, err := tx.Exec(ctx, `CREATE TABLE IF NOT EXISTS `+tx.Table("items")+` (
				tenant TEXT NOT NULL, cart TEXT NOT NULL, items INTEGER NOT NULL, PRIMARY KEY (tenant, cart))`)
			return err
		}),
		projection.Query("cart", func(q projection.Scope, a projection.Args) (string, []any, error) {
			return `SELECT cart, items FROM ` + q.From("items") + ` WHERE cart = $1`, []any{a.String("cart")}, nil
		}, projection.Param("cart", projection.String, true)),
	)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// cartCount reads a cart's items through the projection's query.
func cartCount(t *testing.T, comp *projection.Component, id string) int {
	t.Helper()
	res, err := comp.Query(context.Background(), factum.DefaultTenant, "shop", "items", "cart", map[string]string{"cart": id})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Rows) == 0 {
		return 0
	}
	return toInt(res.Rows[0]["items"])
}

func toInt(v any) int {
	switch n := v.(type) {
	case int64:
		return int(n)
	case int32:
		return int(n)
	case int:
		return n
	}
	return -1
}

// A projection's failure recorded by compensation is retried through the
// projection: the operator's retry writes the stream into the read model
// once, in a transaction, and does not move the checkpoint back. (The
// retry looked the function up among the engine's event processors only,
// and answered NotFound.)
func TestCompensationRetriesAProjectionFailure(t *testing.T) {
	for _, b := range storageBackends() {
		t.Run(b.name, func(t *testing.T) {
			storage, ps := b.open(t)
			var fail atomic.Bool
			fail.Store(true)
			p := versionedItems(t, &fail)
			pc := projection.NewComponent(projection.ComponentConfig{Store: ps, Projections: []*projection.Projection{p},
				Runner: projection.Config{Attempts: 1, PollInterval: 20 * time.Millisecond}})
			cc := compensation.NewComponent(compensation.Config{RetrySpec: compensation.RetrySpec{MaxRetries: 0}},
				compensation.SchedulerConfig{Period: time.Hour})
			eng := startShop(t, engine.Config{Storage: storage, Components: []engine.Component{pc, cc}})
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			wait := command.Wait(factum.StageProjected).Within(20 * time.Second)
			res, err := eng.Gateway().SendAndWait(ctx, factum.NewCommand(carts.WithID("cart-r"), addItem{Fail: true}), wait)
			if err == nil && res.Code == factum.CodeOk {
				t.Fatalf("the failing stream's wait succeeded: %+v", res)
			}
			if _, err := eng.Gateway().SendAndWait(ctx, factum.NewCommand(carts.WithID("cart-r"), addItem{}), wait); err != nil {
				t.Fatal(err)
			}
			if got := cartCount(t, pc, "cart-r"); got != 1 {
				t.Fatalf("before the retry the model holds %d items, want 1 (the failed stream passed)", got)
			}
			before, err := pc.Status(ctx, "shop", "items")
			if err != nil {
				t.Fatal(err)
			}
			streams, err := eng.Store().Load(ctx, carts.WithID("cart-r"), 1, 1)
			if err != nil || len(streams) != 1 {
				t.Fatalf("load the failed stream: %v", err)
			}
			id := compensation.ExecutionID(p.Function(), streams[0].Events[0].ID)
			svc := cc.Service()
			for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(10 * time.Millisecond) {
				if _, err := svc.Get(ctx, id); err == nil {
					break
				} else if time.Now().After(deadline) {
					t.Fatalf("the failure is not recorded: %v", err)
				}
			}
			fail.Store(false)
			a, err := svc.ForceRetry(ctx, id)
			if err != nil {
				t.Fatal(err)
			}
			if a.Outcome != compensation.OutcomeSucceeded {
				t.Fatalf("the retry: %+v", a)
			}
			if got := cartCount(t, pc, "cart-r"); got != 2 {
				t.Fatalf("after the retry the model holds %d items, want 2", got)
			}
			// A second delivery of the same stream (a retry raced by
			// another scheduler) finds no failure mark: nothing twice.
			if ok, err := pc.Redeliver(ctx, p.Function(), &streams[0], time.Second); !ok || err != nil {
				t.Fatalf("Redeliver: %v, %v", ok, err)
			}
			if got := cartCount(t, pc, "cart-r"); got != 2 {
				t.Fatalf("after a second delivery the model holds %d items, want 2", got)
			}
			after, err := pc.Status(ctx, "shop", "items")
			if err != nil {
				t.Fatal(err)
			}
			// The compensation's own streams follow in the log, so the
			// checkpoint may move on; never back.
			if after.Live.Checkpoint.Less(before.Live.Checkpoint) {
				t.Errorf("the retry moved the checkpoint back from %v to %v", before.Live.Checkpoint, after.Live.Checkpoint)
			}
		})
	}
}
