package order_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/command"
	"github.com/factum-go/factum/compensation"
	"github.com/factum-go/factum/engine"
	"github.com/factum-go/factum/examples/order"
	"github.com/factum-go/factum/saga"
	"github.com/factum-go/factum/sqlite"
)

// crashChildEnv names the database a child process of TestSagaStepsSurviveKill
// places orders into until it is killed.
const crashChildEnv = "FACTUM_ORDER_CRASH_CHILD_DB"

func TestMain(m *testing.M) {
	if path := os.Getenv(crashChildEnv); path != "" {
		os.Exit(crashChild(path))
	}
	os.Exit(m.Run())
}

// durableService is the order example over one SQLite database: events,
// snapshots, the consumers' checkpoints and compensation's executions.
type durableService struct {
	rt    *engine.Engine
	comp  *compensation.Compensation
	store *sqlite.EventStore
	close func()
}

func openDurable(ctx context.Context, path string) (*durableService, error) {
	db, err := sqlite.Open(ctx, path, sqlite.Options{})
	if err != nil {
		return nil, err
	}
	es, err := sqlite.NewEventStore(ctx, db, order.Context, sqlite.EventStoreOptions{})
	if err != nil {
		return nil, err
	}
	snaps, err := sqlite.NewSnapshotStore(ctx, db, order.Context)
	if err != nil {
		return nil, err
	}
	cps, err := sqlite.NewCheckpointStore(ctx, db, order.Context)
	if err != nil {
		return nil, err
	}
	comp, err := compensation.New(compensation.Config{Context: order.Context, Snapshots: snaps})
	if err != nil {
		return nil, err
	}
	rt, err := engine.New(engine.Config{
		Store: es, SnapshotStore: snaps, Checkpoints: cps,
		Sagas: []*saga.Saga{order.Fulfilment}, Failures: comp,
	}, order.Orders, order.Inventory, comp.Type())
	if err != nil {
		return nil, err
	}
	if err := comp.Bind(rt); err != nil {
		return nil, err
	}
	if err := rt.Start(ctx); err != nil {
		return nil, err
	}
	return &durableService{rt: rt, comp: comp, store: es, close: func() {
		sctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		_ = rt.Shutdown(sctx)
		_ = cps.Close()
		_ = snaps.Close()
		_ = es.Close()
		_ = db.Close()
	}}, nil
}

// crashChild places orders as fast as 8 clients can until it is killed,
// reporting each acknowledged order on stdout.
func crashChild(path string) int {
	ctx := context.Background()
	svc, err := openDurable(ctx, path)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	gw := svc.rt.Gateway()
	for _, sku := range []string{"apple", "pear", "fig"} {
		if _, err := gw.SendAndWait(ctx, factum.NewCommand(order.Inventory.ID(sku), order.Restock{Qty: 400}), command.Wait(factum.StageProcessed)); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 2
		}
	}
	var mu sync.Mutex
	var n atomic.Int64
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Go(func() {
			for i := 0; ; i++ {
				sku := []string{"apple", "pear", "fig"}[i%3]
				id := fmt.Sprintf("o-%d-%d", w, i)
				_, err := gw.SendAndWait(ctx, factum.NewCommand(order.Orders.ID(id), order.PlaceOrder{SKU: sku, Qty: 1 + i%3}), command.Wait(factum.StageProcessed))
				if err != nil {
					continue
				}
				mu.Lock()
				fmt.Printf("placed %s %d\n", id, n.Add(1))
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	return 0
}

// A process killed (SIGKILL) under load, then restarted on the same SQLite
// database: every order placed reaches a final state, confirmed or
// rejected. Before sagas waited for their commands to be decided, the saga
// consumer's checkpoint moved past orders whose reservations were still
// queued in the dead process, and those orders stayed pending forever.
func TestSagaStepsSurviveKill(t *testing.T) {
	path := filepath.Join(t.TempDir(), "orders.db")
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	child := exec.Command(exe, "-test.run=^$")
	child.Env = append(os.Environ(), crashChildEnv+"="+path)
	child.Stderr = os.Stderr
	out, err := child.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	placed := map[string]bool{}
	lines := bufio.NewScanner(out)
	for len(placed) < 300 && lines.Scan() {
		f := strings.Fields(lines.Text())
		if len(f) == 3 && f[0] == "placed" {
			placed[f[1]] = true
		}
	}
	if err := child.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = child.Wait()
	if len(placed) < 300 {
		t.Fatalf("the child acknowledged only %d orders before it ended: %v", len(placed), lines.Err())
	}

	ctx := context.Background()
	svc, err := openDurable(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(svc.close)
	// Every order in the store, acknowledged or not, must end final.
	deadline := time.Now().Add(3 * time.Minute) // generous: CI runs many packages at once
	for {
		pending, total, err := pendingOrders(ctx, svc.store)
		if err != nil {
			t.Fatal(err)
		}
		if total < len(placed) {
			t.Fatalf("the store holds %d orders, %d were acknowledged", total, len(placed))
		}
		if len(pending) == 0 {
			t.Logf("%d orders (%d acknowledged before the kill), all final", total, len(placed))
			break
		}
		if time.Now().After(deadline) {
			items, _ := svc.comp.Service().List(ctx, compensation.Filter{}, 10)
			t.Fatalf("%d of %d orders still pending after restart, such as %v; compensation: %+v", len(pending), total, pending[:min(5, len(pending))], items)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// pendingOrders returns the IDs of orders whose last event is OrderPlaced,
// and how many orders there are.
func pendingOrders(ctx context.Context, store *sqlite.EventStore) ([]string, int, error) {
	var pending []string
	total := 0
	after := ""
	for {
		ids, err := store.ScanAggregateIDs(ctx, order.Orders.Named(), after, 500)
		if err != nil {
			return nil, 0, err
		}
		for _, id := range ids {
			total++
			streams, err := store.Load(ctx, id, 1, 10)
			if err != nil {
				return nil, 0, err
			}
			if len(streams) == 0 {
				return nil, 0, errors.New("an order without streams: " + id.ID)
			}
			last := streams[len(streams)-1].Events
			if len(streams) == 1 || last[len(last)-1].Name == "order_placed" {
				pending = append(pending, id.ID)
			}
		}
		if len(ids) < 500 {
			return pending, total, nil
		}
		after = ids[len(ids)-1].ID
	}
}
