package order_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"testing"
	"time"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/command"
	"github.com/factum-go/factum/engine"
	"github.com/factum-go/factum/event"
	"github.com/factum-go/factum/examples/order"
	"github.com/factum-go/factum/internal/servicetest"
	"github.com/factum-go/factum/internal/summariestest"
	"github.com/factum-go/factum/postgres"
	"github.com/factum-go/factum/projection"
	"github.com/factum-go/factum/sqlite"
)

// sqlBackend is a database the durable summaries run on: its storage
// handle and its projection store.
type sqlBackend struct {
	storage engine.Storage
	store   projection.Store
}

func sqliteBackend(t testing.TB) sqlBackend {
	t.Helper()
	ctx := context.Background()
	db, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "shop.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	st, err := sqlite.NewProjectionStore(ctx, db, order.Context)
	if err != nil {
		t.Fatal(err)
	}
	return sqlBackend{storage: db, store: st}
}

func postgresBackend(t testing.TB) sqlBackend {
	t.Helper()
	url, schema := servicetest.PostgresSchema(t)
	ctx := context.Background()
	db, err := postgres.Open(ctx, url, postgres.Options{Schema: schema})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(db.Close)
	st, err := postgres.NewProjectionStore(ctx, db, order.Context)
	if err != nil {
		t.Fatal(err)
	}
	return sqlBackend{storage: db, store: st}
}

var sqlBackends = []struct {
	name string
	open func(testing.TB) sqlBackend
}{
	{"SQLite", sqliteBackend},
	{"PostgreSQL", postgresBackend},
}

// startSQLService runs orders, inventory and the saga with the durable
// summaries as a projection component over b.
func startSQLService(t *testing.T, b sqlBackend, runner projection.Config) (*engine.Engine, *projection.Component) {
	t.Helper()
	p, err := order.SummariesProjection()
	if err != nil {
		t.Fatal(err)
	}
	comp := projection.NewComponent(projection.ComponentConfig{Store: b.store, Projections: []*projection.Projection{p}, Runner: runner})
	rt := startOrders(t, engine.Config{Storage: b.storage, Components: []engine.Component{comp}})
	return rt, comp
}

// summary reads one order's summary through the projection's query, in
// tenant.
func summary(t *testing.T, comp *projection.Component, tenant, id string) (order.Summary, bool) {
	t.Helper()
	res, err := comp.Query(context.Background(), tenant, order.Context, order.SummariesName, order.QueryOrder, map[string]string{"id": id})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Rows) == 0 {
		return order.Summary{}, false
	}
	b, err := json.Marshal(res.Rows[0])
	if err != nil {
		t.Fatal(err)
	}
	var row struct {
		OrderID string `json:"order_id"`
		SKU     string `json:"sku"`
		Qty     int    `json:"qty"`
		Status  string `json:"status"`
		Reason  string `json:"reason"`
		Version int    `json:"version"`
	}
	if err := json.Unmarshal(b, &row); err != nil {
		t.Fatalf("row %s: %v", b, err)
	}
	return order.Summary{OrderID: row.OrderID, Tenant: tenant, SKU: row.SKU, Qty: row.Qty, Status: order.Status(row.Status), Reason: row.Reason, Version: row.Version}, true
}

// A PlaceOrder waited for at PROJECTED is in the SQL read model when the
// wait returns (read-after-write), under its tenant only; once the saga
// settles every order, the tables equal the model folded from the log.
func TestSQLSummariesReadAfterWrite(t *testing.T) {
	for _, bk := range sqlBackends {
		t.Run(bk.name, func(t *testing.T) {
			b := bk.open(t)
			rt, comp := startSQLService(t, b, projection.Config{})
			ctx := context.Background()
			gw := rt.Gateway()
			// Aggregate IDs are unique across tenants: each tenant has its
			// own SKUs and order IDs.
			for tenant, sku := range map[string]string{"acme": "apple", "globex": "pear"} {
				if _, err := gw.SendAndWait(ctx, factum.NewCommand(order.Inventory.ID(sku).WithTenant(tenant), order.Restock{Qty: 3}), command.Wait(factum.StageProcessed)); err != nil {
					t.Fatal(err)
				}
			}
			for i, c := range []struct {
				tenant, id, sku string
				qty             int
			}{{"acme", "o-1", "apple", 2}, {"acme", "o-2", "apple", 2}, {"globex", "g-1", "pear", 1}} {
				res, err := gw.SendAndWait(ctx, factum.NewCommand(order.Orders.ID(c.id).WithTenant(c.tenant), order.PlaceOrder{SKU: c.sku, Qty: c.qty}), command.Wait(factum.StageProjected))
				if err != nil {
					t.Fatal(err)
				}
				if res.Stage != factum.StageProjected {
					t.Fatalf("order %d: the wait ended at %s", i, res.Stage)
				}
				got, ok := summary(t, comp, c.tenant, c.id)
				if !ok || got.SKU != c.sku || got.Qty != c.qty || got.Version < 1 {
					t.Fatalf("right after PROJECTED, order %s@%s reads %+v (present %v)", c.id, c.tenant, got, ok)
				}
			}
			if _, ok := summary(t, comp, "globex", "o-1"); ok {
				t.Fatal("acme's order o-1 is visible to tenant globex")
			}
			// Stock for 3: acme's first order is confirmed and its second
			// rejected; globex's is confirmed. Wait for the saga to settle,
			// then compare with the log.
			log, ok := rt.Store().(event.LogReader)
			if !ok {
				t.Fatal("the event store has no global log")
			}
			deadline := time.Now().Add(30 * time.Second)
			for {
				streams, err := summariestest.ReadLog(ctx, log)
				if err != nil {
					t.Fatal(err)
				}
				want, err := summariestest.Fold(streams)
				if err != nil {
					t.Fatal(err)
				}
				_, got, err := summariestest.Snapshot(ctx, b.store)
				if err != nil {
					t.Fatal(err)
				}
				d := summariestest.Diff(want, got)
				settled := want.Totals["acme/apple/"+string(order.Confirmed)].Orders == 1 &&
					want.Totals["acme/apple/"+string(order.Rejected)].Orders == 1 &&
					want.Totals["globex/pear/"+string(order.Confirmed)].Orders == 1
				if d == "" && settled {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("settled %v; the read model differs from the log:\n%s", settled, d)
				}
				time.Sleep(10 * time.Millisecond)
			}
		})
	}
}

// The oracle can fail: a model that counts an order twice differs.
func TestFoldDiffSeesADoubleCount(t *testing.T) {
	want := summariestest.Model{Totals: map[string]order.Total{"acme/apple/pending": {Tenant: "acme", SKU: "apple", Status: order.Pending, Orders: 1, Qty: 2}}}
	got := summariestest.Model{Totals: map[string]order.Total{"acme/apple/pending": {Tenant: "acme", SKU: "apple", Status: order.Pending, Orders: 2, Qty: 4}}}
	if summariestest.Diff(want, got) == "" {
		t.Fatal("Diff sees no difference between one order and the same order counted twice")
	}
}
