package crashtest_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/factum-go/factum/internal/crashtest"
	"github.com/factum-go/factum/internal/serveproc"
)

// SagaAuditEnabled turns on CheckSagasComplete in the crash tests: a saga
// passes a stream only after its commands are durably decided, so a kill
// -9 leaves no order pending for good.
const SagaAuditEnabled = true

// inventories are the SKUs the orders of the load reserve from.
var inventories = []string{"inv-0", "inv-1", "inv-2", "inv-3"}

// restock gives every inventory plenty of stock, so that most orders are
// confirmed and some (when the load is long) rejected.
func restock(ctx context.Context, c *crashtest.Client, led *crashtest.Ledger) error {
	for i, sku := range inventories {
		req := crashtest.Request{Aggregate: "inventory", ID: sku, Command: "restock", RequestID: fmt.Sprintf("restock-%d", i), Body: []byte(`{"qty":100000}`)}
		if o := crashtest.Send(ctx, c, led, req); o != crashtest.OutcomeAcked {
			return fmt.Errorf("restock %s: outcome %d", sku, o)
		}
	}
	return nil
}

func buildServe(t *testing.T) string {
	t.Helper()
	bin, err := serveproc.Build()
	if err != nil {
		t.Fatal(err)
	}
	return bin
}

// killAndRestart is the kill -9 fault: the server dies with requests in
// flight and starts again on the same data; recovery is the time until it
// is ready.
func killAndRestart(ctx context.Context, r *crashtest.Round) error {
	r.KillServe()
	d, err := r.RestartServe(ctx)
	r.Recovered(d)
	return err
}

// checkSagas runs CheckSagasComplete when SagaAuditEnabled, and says
// plainly in the log when it does not.
func checkSagas(t *testing.T, res *crashtest.Result) {
	t.Helper()
	if !SagaAuditEnabled {
		t.Logf("saga-completion audit NOT run: SagaAuditEnabled is false")
		return
	}
	n, err := crashtest.RetryCompensations(context.Background(), res.Client)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("sagas: retried %d compensation records first, as an operator would", n)
	rep, err := crashtest.CheckSagasComplete(context.Background(), res.Client, res.Ledger, 60*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("sagas: %d orders, %d confirmed, %d rejected, %d pending", rep.Orders, rep.Confirmed, rep.Rejected, rep.Pending)
	for _, p := range rep.Problems {
		t.Error(p)
	}
}

func TestKillServeSQLite(t *testing.T) {
	skipShort(t)
	bin := buildServe(t)
	dir := t.TempDir()
	res := crashtest.Rounds(t, crashtest.RoundsConfig{
		Seed:   crashtest.Seed(t),
		Rounds: rounds(),
		Start: func(ctx context.Context) (*serveproc.Process, error) {
			return serveproc.Start(ctx, serveproc.Options{Binary: bin, DataDir: dir})
		},
		Setup: restock,
		Fault: killAndRestart,
		Load:  crashtest.LoadConfig{OrderEvery: 8, SKUs: inventories},
	})
	checkSagas(t, res)
}
