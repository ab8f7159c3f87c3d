package order_test

import (
	"context"
	"database/sql"
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
	"github.com/factum-go/factum/saga"
	"github.com/factum-go/factum/sqlite"
	"github.com/jackc/pgx/v5/stdlib"
)

// sqlBackend is a database the durable summaries run on: its storage
// handle, its projection store and a database/sql reader of its tables.
type sqlBackend struct {
	storage engine.Storage
	store   projection.Store
	reader  *sql.DB
}

func sqliteBackend(t *testing.T) sqlBackend {
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
	return sqlBackend{storage: db, store: st, reader: db.Reader()}
}

func postgresBackend(t *testing.T) sqlBackend {
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
	reader := stdlib.OpenDBFromPool(db.Pool())
	t.Cleanup(func() { _ = reader.Close() })
	return sqlBackend{storage: db, store: st, reader: reader}
}

var sqlBackends = []struct {
	name string
	open func(*testing.T) sqlBackend
}{
	{"SQLite", sqliteBackend},
	{"PostgreSQL", postgresBackend},
}

// startSQLService runs orders, inventory and the saga with the durable
// summaries as a projection component over b.
func startSQLService(t *testing.T, b sqlBackend, runner projection.Config) *engine.Engine {
	t.Helper()
	p, err := order.SummariesProjection()
	if err != nil {
		t.Fatal(err)
	}
	comp := projection.NewComponent(projection.ComponentConfig{Store: b.store, Projections: []*projection.Projection{p}, Runner: runner})
	rt, err := engine.New(engine.Config{
		Storage: b.storage, Sagas: []*saga.Saga{order.Fulfilment}, Components: []engine.Component{comp},
	}, order.Orders, order.Inventory)
	if err != nil {
		t.Fatal(err)
	}
	if err := rt.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := rt.Shutdown(ctx); err != nil {
			t.Error(err)
		}
	})
	return rt
}

// summary reads one order's row, scoped by tenant.
func summary(t *testing.T, db *sql.DB, tenant, id string) (order.Summary, bool) {
	t.Helper()
	v := order.Summary{Tenant: tenant, OrderID: id}
	var st string
	err := db.QueryRow(`SELECT sku, qty, status, reason, version FROM `+order.SummariesTable+`
		WHERE tenant = $1 AND order_id = $2`, tenant, id).Scan(&v.SKU, &v.Qty, &st, &v.Reason, &v.Version)
	if err == sql.ErrNoRows {
		return order.Summary{}, false
	}
	if err != nil {
		t.Fatal(err)
	}
	v.Status = order.Status(st)
	return v, true
}

// A PlaceOrder waited for at PROJECTED is in the SQL read model when the
// wait returns (read-after-write), under its tenant only; once the saga
// settles every order, the tables equal the model folded from the log.
func TestSQLSummariesReadAfterWrite(t *testing.T) {
	for _, bk := range sqlBackends {
		t.Run(bk.name, func(t *testing.T) {
			b := bk.open(t)
			rt := startSQLService(t, b, projection.Config{})
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
				got, ok := summary(t, b.reader, c.tenant, c.id)
				if !ok || got.SKU != c.sku || got.Qty != c.qty || got.Version < 1 {
					t.Fatalf("right after PROJECTED, order %s@%s reads %+v (present %v)", c.id, c.tenant, got, ok)
				}
			}
			if _, ok := summary(t, b.reader, "globex", "o-1"); ok {
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
				got, err := summariestest.Read(ctx, b.reader)
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
