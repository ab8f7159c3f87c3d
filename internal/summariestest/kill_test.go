package summariestest_test

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/engine"
	"github.com/factum-go/factum/event"
	"github.com/factum-go/factum/eventstore"
	"github.com/factum-go/factum/examples/order"
	"github.com/factum-go/factum/internal/serveproc"
	"github.com/factum-go/factum/internal/servicetest"
	"github.com/factum-go/factum/internal/summariestest"
	"github.com/factum-go/factum/postgres"
	"github.com/factum-go/factum/projection"
	"github.com/factum-go/factum/sqlite"
)

// TestMain removes the serve binary the tests built.
func TestMain(m *testing.M) { serveproc.Main(m) }

// killRounds is how many times each test kills serve under load.
const killRounds = 6

// backend is a database serve runs on, seen from the test: serve's
// flags, and the test's own handle on the same database for its checks.
type backend struct {
	serve serveproc.Options
	// open returns the test's handle: the log and the projection store.
	open func(t *testing.T) (event.LogReader, projection.Store, func())
}

func sqliteKillBackend(t *testing.T) backend {
	dir := t.TempDir()
	return backend{
		serve: serveproc.Options{DataDir: dir},
		open: func(t *testing.T) (event.LogReader, projection.Store, func()) {
			ctx := context.Background()
			db, err := sqlite.Open(ctx, filepath.Join(dir, "factum.db"))
			if err != nil {
				t.Fatal(err)
			}
			return openHandle(t, db, func(ctx context.Context) (projection.Store, error) {
				return sqlite.NewProjectionStore(ctx, db, order.Context)
			}, func() { _ = db.Close() })
		},
	}
}

func postgresKillBackend(t *testing.T) backend {
	url, schema := servicetest.PostgresSchema(t)
	return backend{
		serve: serveproc.Options{PostgresURL: servicetest.SearchPathURL(url, schema)},
		open: func(t *testing.T) (event.LogReader, projection.Store, func()) {
			ctx := context.Background()
			db, err := postgres.Open(ctx, url, postgres.Options{Schema: schema, MaxConns: 4})
			if err != nil {
				t.Fatal(err)
			}
			return openHandle(t, db, func(ctx context.Context) (projection.Store, error) {
				return postgres.NewProjectionStore(ctx, db, order.Context)
			}, db.Close)
		},
	}
}

// openHandle returns the log and projection store of the context in db.
func openHandle(t *testing.T, db engine.Storage, store func(context.Context) (projection.Store, error), closeDB func()) (event.LogReader, projection.Store, func()) {
	t.Helper()
	ctx := context.Background()
	es, err := db.EventStore(ctx, order.Context)
	if err != nil {
		closeDB()
		t.Fatal(err)
	}
	log, ok := es.(event.LogReader)
	if !ok {
		closeDB()
		t.Fatalf("the event store %T has no global log", es)
	}
	st, err := store(ctx)
	if err != nil {
		closeDB()
		t.Fatal(err)
	}
	return log, st, closeDB
}

// Killed at random moments under load (SIGKILL, mid-batch as often as
// not) and restarted on the same database, serve's order summaries equal,
// after every kill, the model folded from the log up to their checkpoint:
// no stream applied twice, none skipped, although the totals are counters
// that a repeated stream would move twice. At the end, with the load
// stopped, the summaries catch up with the whole log and hold every
// order that was acknowledged.
func TestSummariesExactlyOnceAcrossKills(t *testing.T) {
	bin, err := serveproc.Build()
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		open func(*testing.T) backend
	}{{"SQLite", sqliteKillBackend}, {"PostgreSQL", postgresKillBackend}} {
		t.Run(c.name, func(t *testing.T) {
			b := c.open(t)
			b.serve.Binary = bin
			runKills(t, b)
		})
	}
}

func runKills(t *testing.T, b backend) {
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 22))
	acked := map[string]bool{} // tenant/order acknowledged at PROCESSED
	var mu sync.Mutex
	for round := range killRounds {
		p, err := serveproc.Start(ctx, b.serve)
		if err != nil {
			t.Fatal(err)
		}
		if round == 0 {
			restock(t, p.URL)
		}
		stop := make(chan struct{})
		var wg sync.WaitGroup
		for w := range 4 {
			wg.Go(func() {
				client := &http.Client{Timeout: 10 * time.Second}
				for i := 0; ; i++ {
					select {
					case <-stop:
						return
					default:
					}
					tenant, sku := tenantSKU(w + i)
					id := fmt.Sprintf("r%d-w%d-%d", round, w, i)
					if place(client, p.URL, tenant, id, sku, 1+i%3) {
						mu.Lock()
						acked[tenant+"/"+id] = true
						mu.Unlock()
					}
				}
			})
		}
		time.Sleep(time.Duration(200+rng.IntN(1300)) * time.Millisecond)
		p.Kill()
		close(stop)
		wg.Wait()
		log, store, closeDB := b.open(t)
		pos, got, err := summariestest.Snapshot(ctx, store)
		if err != nil {
			closeDB()
			t.Fatalf("round %d: %v", round, err)
		}
		streams, err := summariestest.ReadLog(ctx, log)
		closeDB()
		if err != nil {
			t.Fatal(err)
		}
		want, err := summariestest.Fold(summariestest.UpTo(streams, pos))
		if err != nil {
			t.Fatal(err)
		}
		if d := summariestest.Diff(want, got); d != "" {
			t.Fatalf("round %d: after the kill, the summaries at checkpoint %+v differ from the log (%d streams):\n%s", round, pos, len(streams), d)
		}
		t.Logf("round %d: %d of %d streams projected, %d summaries", round, len(summariestest.UpTo(streams, pos)), len(streams), len(got.Summaries))
	}
	// Restart without load: the summaries catch up with the whole log.
	p, err := serveproc.Start(ctx, b.serve)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Kill()
	deadline := time.Now().Add(2 * time.Minute)
	for {
		log, store, closeDB := b.open(t)
		pos, got, err := summariestest.Snapshot(ctx, store)
		var streams []factum.EventStream
		if err == nil {
			streams, err = summariestest.ReadLog(ctx, log)
		}
		if err != nil {
			closeDB()
			t.Fatal(err)
		}
		// Caught up with the log as it reads now, and holding every
		// acknowledged order: on PostgreSQL the log shows a stream only
		// once every transaction older than it has ended, anywhere on the
		// server, so an acknowledged order may take a while to appear.
		missing := ""
		for k := range acked {
			if _, ok := got.Summaries[k]; !ok {
				missing = k
				break
			}
		}
		if len(streams) > 0 && pos == streams[len(streams)-1].Position {
			want, err := summariestest.Fold(streams)
			if err != nil {
				t.Fatal(err)
			}
			if d := summariestest.Diff(want, got); d != "" {
				t.Fatalf("caught up, the summaries differ from the log:\n%s", d)
			}
			if missing == "" {
				t.Logf("caught up: %d streams, %d summaries, %d orders acknowledged", len(streams), len(got.Summaries), len(acked))
				return
			}
		}
		if time.Now().After(deadline) && missing != "" {
			tenant, id, _ := strings.Cut(missing, "/")
			stored, err := log.(eventstore.Store).Load(ctx, order.Orders.ID(id).WithTenant(tenant), 1, eventstore.MaxVersion)
			closeDB()
			t.Fatalf("order %s was acknowledged but has no summary (checkpoint %+v, %d streams in the log; the store has %d streams of it, %v)",
				missing, pos, len(streams), len(stored), err)
		}
		closeDB()
		if time.Now().After(deadline) {
			t.Fatalf("the summaries did not catch up: checkpoint %+v, %d streams", pos, len(streams))
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// tenantSKU spreads orders over two tenants with three SKUs each (an
// inventory's ID is its SKU, and aggregate IDs are unique across tenants).
func tenantSKU(i int) (string, string) {
	tenant := []string{"acme", "globex"}[i%2]
	return tenant, fmt.Sprintf("%s-sku-%d", tenant, i%3)
}

// restock gives every SKU enough stock for some orders, so the saga both
// confirms and rejects.
func restock(t *testing.T, base string) {
	t.Helper()
	for i := range 6 {
		tenant, sku := tenantSKU(i)
		res, err := http.Post(base+"/tenant/"+tenant+"/inventory/"+sku+"/restock", "application/json", strings.NewReader(`{"qty":150}`))
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode != http.StatusOK {
			t.Fatalf("restock %s: %d %s", sku, res.StatusCode, b)
		}
	}
}

// place sends PlaceOrder and reports whether it was acknowledged.
func place(client *http.Client, base, tenant, id, sku string, qty int) bool {
	res, err := client.Post(base+"/tenant/"+tenant+"/order/"+id+"/place_order", "application/json",
		strings.NewReader(fmt.Sprintf(`{"sku":%q,"qty":%d}`, sku, qty)))
	if err != nil {
		return false
	}
	_, _ = io.Copy(io.Discard, res.Body)
	res.Body.Close()
	return res.StatusCode == http.StatusOK
}
