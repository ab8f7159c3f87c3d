package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/command"
	"github.com/factum-go/factum/engine"
	"github.com/factum-go/factum/eventstore"
	"github.com/factum-go/factum/examples/cart"
	"github.com/factum-go/factum/httpapi"
	"github.com/factum-go/factum/projection"
	"github.com/factum-go/factum/sqlite"
)

// The projection sub-commands drive a server's projection routes: list,
// status, a blue/green rebuild, a query and a reset.
func TestProjectionCommands(t *testing.T) {
	ctx := context.Background()
	db, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "read.db"), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ps, err := sqlite.NewProjectionStore(ctx, db, boundedContext)
	if err != nil {
		t.Fatal(err)
	}
	p, err := projection.New(boundedContext, "carts_seen",
		func(ctx context.Context, tx projection.Tx, s *factum.EventStream) error {
			_, err := tx.Exec(ctx, `INSERT INTO `+tx.Table("carts")+` (tenant, cart) VALUES ($1, $2) ON CONFLICT DO NOTHING`,
				s.AggregateID.TenantOrDefault(), s.AggregateID.ID)
			return err
		},
		projection.Schema(1, "carts"),
		projection.Setup(func(ctx context.Context, tx projection.Tx) error {
			_, err := tx.Exec(ctx, `CREATE TABLE IF NOT EXISTS `+tx.Table("carts")+` (tenant TEXT NOT NULL, cart TEXT NOT NULL, PRIMARY KEY (tenant, cart))`)
			return err
		}),
		projection.Query("all", func(q projection.Scope, _ projection.Args) (string, []any, error) {
			return `SELECT cart FROM ` + q.From("carts") + ` ORDER BY cart`, nil, nil
		}),
	)
	if err != nil {
		t.Fatal(err)
	}
	comp := projection.NewComponent(projection.ComponentConfig{Store: ps, Projections: []*projection.Projection{p},
		Runner: projection.Config{PollInterval: 10 * time.Millisecond}})
	rt, err := engine.New(engine.Config{Store: eventstore.NewMemory(), Components: []engine.Component{comp}}, cart.New(catalog(), cart.DefaultLimits))
	if err != nil {
		t.Fatal(err)
	}
	if err := rt.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer rt.Shutdown(ctx)
	h, err := httpapi.New(httpapi.Config{Engine: rt, Projections: comp})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	defer srv.Close()
	if _, err := rt.Gateway().SendAndWait(ctx, factum.NewCommand(carts.WithID("c-1"), cart.AddItem{SKU: "sku-1", Qty: 1}), command.Wait(factum.StageProjected)); err != nil {
		t.Fatal(err)
	}

	var out, errOut bytes.Buffer
	cli := func(args ...string) int {
		out.Reset()
		errOut.Reset()
		return run(ctx, append(args, "--url", srv.URL, "--json"), &out, &errOut)
	}
	if code := cli("projection", "list"); code != 0 || !strings.Contains(out.String(), `"carts_seen"`) {
		t.Fatalf("list: %d %s %s", code, out.String(), errOut.String())
	}
	if code := cli("projection", "rebuild", "carts_seen"); code != 0 {
		t.Fatalf("rebuild: %d %s", code, errOut.String())
	}
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if code := cli("projection", "status", "carts_seen"); code != 0 {
			t.Fatalf("status: %d %s", code, errOut.String())
		}
		var s projection.Status
		if err := json.Unmarshal(out.Bytes(), &s); err != nil {
			t.Fatal(err)
		}
		if s.Live != nil && s.Live.Number == 2 && s.Next == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the rebuild did not switch: %s", out.String())
		}
	}
	if code := cli("projection", "query", "carts_seen", "all"); code != 0 || !strings.Contains(out.String(), `"c-1"`) || !strings.Contains(out.String(), `"build": 2`) {
		t.Fatalf("query: %d %s %s", code, out.String(), errOut.String())
	}
	if code := cli("projection", "query", "carts_seen", "all", "nope=1"); code != 1 || !strings.Contains(errOut.String(), "400 IllegalArgument") {
		t.Fatalf("query with an unknown parameter: %d %s", code, errOut.String())
	}
	if code := cli("projection", "query", "carts_seen", "all", "nope"); code != 2 {
		t.Fatalf("query with a malformed parameter: %d %s", code, errOut.String())
	}
	if code := cli("projection", "reset", "carts_seen"); code != 0 {
		t.Fatalf("reset: %d %s", code, errOut.String())
	}
	if code := cli("projection", "status", "nope"); code != 1 || !strings.Contains(errOut.String(), "404") {
		t.Fatalf("status of an unknown projection: %d %s", code, errOut.String())
	}
}
