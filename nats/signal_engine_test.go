package nats_test

import (
	"cmp"
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/command"
	"github.com/factum-go/factum/engine"
	"github.com/factum-go/factum/event"
	"github.com/factum-go/factum/examples/order"
	"github.com/factum-go/factum/internal/servicetest"
	"github.com/factum-go/factum/nats"
	"github.com/factum-go/factum/postgres"
	"github.com/factum-go/factum/saga"
	"github.com/factum-go/factum/sqlite"
	"github.com/nats-io/nats-server/v2/server"
	natsgo "github.com/nats-io/nats.go"
)

// startNATS runs a NATS server in process until the test ends.
func startNATS(tb testing.TB) string {
	tb.Helper()
	s, err := server.NewServer(&server.Options{Host: "127.0.0.1", Port: -1, NoLog: true, NoSigs: true})
	if err != nil {
		tb.Fatal(err)
	}
	go s.Start()
	if !s.ReadyForConnections(10 * time.Second) {
		tb.Fatal("nats server did not start")
	}
	tb.Cleanup(s.Shutdown)
	return s.ClientURL()
}

// storages opens the stores the two-instance tests share: SQLite in a
// file, and PostgreSQL in a schema of its own when FACTUM_POSTGRES_URL
// is set.
func storages(t *testing.T) map[string]engine.Storage {
	t.Helper()
	ctx := context.Background()
	out := map[string]engine.Storage{}
	db, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "factum.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	out["sqlite"] = db
	if os.Getenv(servicetest.PostgresEnv) != "" {
		url, schema := servicetest.PostgresSchema(t)
		pg, err := postgres.Open(ctx, url, postgres.Options{Schema: schema})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(pg.Close)
		out["postgresql"] = pg
	}
	return out
}

// instanceOptions are what an instance runs beside the order example's
// aggregates, its saga and its snapshotter.
type instanceOptions struct {
	summaries bool                            // the order summaries' projection (PROJECTED)
	tee       func(command.Sink) command.Sink // wraps the in-process sink the NATS signals hand theirs to
	leaseTTL  time.Duration                   // 10s when zero
	timeout   time.Duration                   // the waits' default; 5s when zero
}

// instance starts one engine of the order example on st, its consumers
// under st's database leases as holder name, with its wait signals over
// NATS at url when prefix is set (in process only otherwise), and with
// opt. The lease outlasts any stall of a loaded machine: a must hold the
// consumers throughout, or b would answer its own waits.
func instance(tb testing.TB, st engine.Storage, url, prefix, name string, opt instanceOptions) (*engine.Engine, *nats.Signals) {
	tb.Helper()
	ctx := context.Background()
	cps, err := st.CheckpointStore(ctx, order.Orders.Named().Context)
	if err != nil {
		tb.Fatal(err)
	}
	leases, ok := cps.(event.LeaseStore)
	if !ok {
		tb.Fatalf("%T has no leases", cps)
	}
	cfg := engine.Config{
		Storage: st, Sagas: []*saga.Saga{order.Fulfilment},
		Events:         event.Config{Leases: leases, Holder: name, LeaseTTL: cmp.Or(opt.leaseTTL, 10*time.Second), PollInterval: 50 * time.Millisecond},
		DefaultTimeout: cmp.Or(opt.timeout, 5*time.Second),
	}
	if opt.summaries {
		proj, err := order.NewSummaries().Processor()
		if err != nil {
			tb.Fatal(err)
		}
		cfg.Processors = []*event.Processor{proj}
	}
	var sig *nats.Signals
	if prefix != "" {
		nc, err := natsgo.Connect(url)
		if err != nil {
			tb.Fatal(err)
		}
		tb.Cleanup(nc.Close)
		if sig, err = nats.NewSignals(nats.SignalsConfig{Conn: nc, Instance: name, Prefix: prefix}); err != nil {
			tb.Fatal(err)
		}
		tb.Cleanup(func() { _ = sig.Close() })
		cfg.Signals, cfg.Bus = sig.Sink, sig.Bus(nil)
		if opt.tee != nil {
			cfg.Signals = func(local command.Sink) (command.Sink, error) { return sig.Sink(opt.tee(local)) }
		}
	}
	rt, err := engine.New(cfg, order.Orders, order.Inventory)
	if err != nil {
		tb.Fatal(err)
	}
	if err := rt.Start(ctx); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		_ = rt.Shutdown(ctx)
	})
	return rt, sig
}

// takeLeases has a, the first instance, take every consumer lease before
// another starts: it restocks sku with qty and waits until the saga
// handled the order named first, which completes locally once a's
// consumers run.
func takeLeases(tb testing.TB, a *engine.Engine, sku string, qty int, first string) {
	tb.Helper()
	ctx := context.Background()
	if _, err := a.Gateway().SendAndWait(ctx, factum.NewCommand(order.Inventory.ID(sku), order.Restock{Qty: qty}), command.Wait(factum.StageSnapshot)); err != nil {
		tb.Fatal(err)
	}
	if _, err := a.Gateway().SendAndWait(ctx, factum.NewCommand(order.Orders.ID(first), order.PlaceOrder{SKU: sku, Qty: 1}), command.Wait(factum.StageSagaHandled)); err != nil {
		tb.Fatal(err)
	}
}

// With the consumers leased, instance a runs the snapshotter and the
// saga for both instances. A wait for SNAPSHOT or SAGA_HANDLED at b, which
// runs none of them, completes when the signals cross over NATS; without
// them it ends as an unknown-outcome timeout, which Lookup settles from
// either instance.
func TestAWaitAtTheInstanceWithoutTheLeaseCompletes(t *testing.T) {
	url := startNATS(t)
	for backend, st := range storages(t) {
		for _, crossing := range []bool{true, false} {
			name := backend + "/in process only"
			if crossing {
				name = backend + "/over nats"
			}
			t.Run(name, func(t *testing.T) {
				waitAtTheNonHolder(t, st, url, crossing)
			})
		}
	}
}

func waitAtTheNonHolder(t *testing.T, st engine.Storage, url string, crossing bool) {
	ctx := context.Background()
	prefix := ""
	if crossing {
		prefix = "t" + factum.NewID()[24:] + ".signal"
	}
	// Unique names per run: the store is shared by the subtests.
	run := factum.NewID()[24:]
	a, sigA := instance(t, st, url, prefix, "a"+run, instanceOptions{})
	sku := "sku-" + run
	takeLeases(t, a, sku, 100, "o-first-"+run)
	b, sigB := instance(t, st, url, prefix, "b"+run, instanceOptions{})

	for i, stage := range []factum.CommandStage{factum.StageSnapshot, factum.StageSagaHandled} {
		id := order.Orders.ID("o-" + run + "-" + stage.String())
		cmd := factum.NewCommand(id, order.PlaceOrder{SKU: sku, Qty: 1})
		cmd.RequestID = "r-" + run + "-" + stage.String()
		r, err := b.Gateway().SendAndWait(ctx, cmd, command.Wait(stage).Within(3*time.Second))
		if crossing {
			if err != nil {
				t.Fatalf("wait for %s at b: %v", stage, err)
			}
			if r.Stage != stage || !r.Succeeded() || r.AggregateVersion != 1 {
				t.Fatalf("wait for %s at b: %+v", stage, r)
			}
		} else if factum.CodeOf(err) != factum.CodeRequestTimeout {
			t.Fatalf("wait for %s at b without crossing signals: %v (%+v), want a RequestTimeout", stage, err, r)
		}
		// Lookup settles it from either instance.
		for _, rt := range []*engine.Engine{a, b} {
			got, err := rt.Gateway().Lookup(ctx, id, cmd.RequestID)
			if err != nil || got.AggregateVersion != 1 || got.RequestID != cmd.RequestID {
				t.Fatalf("lookup %d: %+v, %v", i, got, err)
			}
		}
	}
	if _, err := a.Gateway().Lookup(ctx, order.Orders.ID("o-never"), "r-never"); !errors.Is(err, factum.ErrNotFound) && factum.CodeOf(err) != factum.CodeNotFound {
		t.Fatalf("lookup of a request never made: %v", err)
	}
	if crossing {
		if got := sigA.Stats(); got.Sent == 0 {
			t.Fatalf("a sent no signal to b: %+v", got)
		}
		if got := sigB.Stats(); got.Received == 0 {
			t.Fatalf("b received no signal: %+v", got)
		}
	}
}
