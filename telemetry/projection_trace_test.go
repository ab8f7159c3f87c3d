package telemetry_test

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/aggregate"
	"github.com/factum-go/factum/codec"
	"github.com/factum-go/factum/event"
	"github.com/factum-go/factum/examples/order"
	"github.com/factum-go/factum/projection"
	"github.com/factum-go/factum/sqlite"
	"github.com/factum-go/factum/telemetry"
	"go.opentelemetry.io/otel/codes"
)

// A projection run by the projection package's runner, with the
// telemetry's event middleware in its Config, has a span per stream it
// projects, continuing the command's trace, and a failing one marks its
// span with the error. The function still gets its transaction.
func TestAFailingProjectionMarksItsSpan(t *testing.T) {
	ctx := context.Background()
	db, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "factum.db"), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	es, err := sqlite.NewEventStore(ctx, db, "shop", sqlite.EventStoreOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { es.Close() })
	ps, err := sqlite.NewProjectionStore(ctx, db, "shop")
	if err != nil {
		t.Fatal(err)
	}
	tel, exp, tp := newTraced(t, 1)
	exec, err := order.Inventory.NewExecutor(aggregate.ExecutorConfig{Store: es, Codec: codec.NewRegistry(), Middleware: []aggregate.Middleware{tel.Commands()}})
	if err != nil {
		t.Fatal(err)
	}
	cctx, client := tp.Tracer("test").Start(ctx, "client")
	for _, sku := range []string{"sku-ok", "sku-bad"} {
		cmd := factum.NewCommand(order.Inventory.ID(sku), order.Restock{Qty: 1})
		cmd.AllowCreate = true
		if sig := exec.Process(cctx, &cmd); !sig.Succeeded() {
			t.Fatalf("%+v", sig)
		}
	}
	client.End()
	boom := errors.New("summary table is gone")
	p, err := projection.New("shop", "summary", func(ctx context.Context, tx projection.Tx, s *factum.EventStream) error {
		var one int
		if err := tx.QueryRow(ctx, "SELECT 1").Scan(&one); err != nil || one != 1 {
			return errors.New("the function got no usable transaction")
		}
		if s.AggregateID.ID == "sku-bad" {
			return boom
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	var recorded []event.Failure
	r, err := projection.NewRunner(p, projection.Config{
		Log: es, Store: ps, Attempts: 1, Middleware: []event.Middleware{tel.Events()},
		Failures: event.FailureRecorderFunc(func(_ context.Context, f event.Failure) error {
			recorded = append(recorded, f)
			return nil
		}),
	})
	if err != nil {
		t.Fatal(err)
	}
	r.Drain()
	if err := r.Run(ctx); err != nil {
		t.Fatal(err)
	}
	if len(recorded) != 1 {
		t.Fatalf("%d failures recorded, want 1", len(recorded))
	}
	var ok, failed int
	for _, s := range exp.GetSpans() {
		if s.Name != "factum.function shop/summary/project" {
			continue
		}
		if s.SpanContext.TraceID() != client.SpanContext().TraceID() {
			t.Errorf("a projection span outside the command's trace")
		}
		if v, _ := attr(s, telemetry.AttrStage); v.AsString() != "PROJECTED" {
			t.Errorf("stage %q", v.AsString())
		}
		id, _ := attr(s, telemetry.AttrAggregateID)
		switch id.AsString() {
		case "sku-ok":
			ok++
			if s.Status.Code == codes.Error {
				t.Errorf("the projected stream's span has status %+v", s.Status)
			}
		case "sku-bad":
			failed++
			if s.Status.Code != codes.Error || !strings.Contains(s.Status.Description, boom.Error()) {
				t.Errorf("the failing stream's span has status %+v", s.Status)
			}
			if len(s.Events) == 0 || s.Events[0].Name != "exception" {
				t.Errorf("no exception event on the failing stream's span: %+v", s.Events)
			}
		}
	}
	if ok == 0 || failed == 0 {
		t.Fatalf("%d spans of the projected stream, %d of the failing one; spans: %v", ok, failed, names2(exp.GetSpans()))
	}
}
