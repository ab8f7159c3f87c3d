package crashtest_test

import (
	"context"
	"encoding/json"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/factum-go/factum/internal/crashtest"
	"github.com/factum-go/factum/internal/pgserver"
	"github.com/factum-go/factum/internal/serveproc"
)

// privatePostgres starts a private PostgreSQL server with a fresh
// database and returns both.
func privatePostgres(t *testing.T) (*pgserver.Server, string) {
	t.Helper()
	pg := pgserver.Start(t)
	url, err := pg.CreateDatabase(context.Background(), "factum")
	if err != nil {
		t.Fatal(err)
	}
	return pg, url
}

func startOn(bin, url string) func(ctx context.Context) (*serveproc.Process, error) {
	return func(ctx context.Context) (*serveproc.Process, error) {
		return serveproc.Start(ctx, serveproc.Options{Binary: bin, PostgresURL: url})
	}
}

// roundsOnPostgres runs the crash rounds of serve on a private PostgreSQL
// server pg, fault striking in each round, under the audit, and checks
// the sagas.
func roundsOnPostgres(t *testing.T, audit crashtest.AuditConfig, fault func(ctx context.Context, pg *pgserver.Server, r *crashtest.Round) error) {
	t.Helper()
	skipShort(t)
	bin := buildServe(t)
	pg, url := privatePostgres(t)
	res := crashtest.Rounds(t, crashtest.RoundsConfig{
		Seed:   crashtest.Seed(t),
		Rounds: rounds(),
		Start:  startOn(bin, url),
		Setup:  restock,
		Fault:  func(ctx context.Context, r *crashtest.Round) error { return fault(ctx, pg, r) },
		Load:   crashtest.LoadConfig{OrderEvery: 8, SKUs: inventories},
		Audit:  audit,
	})
	checkSagas(t, res)
}

func TestKillServePostgres(t *testing.T) {
	roundsOnPostgres(t, crashtest.AuditConfig{}, func(ctx context.Context, _ *pgserver.Server, r *crashtest.Round) error {
		return killAndRestart(ctx, r)
	})
}

// databaseFault explains compensation records left by a database outage:
// an event function that failed because its connection was cut or the
// server was down. Anything else stays unexplained.
func databaseFault(e json.RawMessage) bool {
	s := strings.ToLower(string(e))
	for _, m := range []string{"connection", "terminating", "shutting down", "starting up", "broken pipe", "eof", "57p01", "57p03", "recovery"} {
		if strings.Contains(s, m) {
			return true
		}
	}
	return false
}

// PostgreSQL stopped under load (immediately, as in a crash, or fast) and
// started again after a while: serve is not restarted, /readyz says 503
// while the database is away and 200 again after, and the audit holds.
func TestPostgresRestartUnderLoad(t *testing.T) {
	roundsOnPostgres(t, crashtest.AuditConfig{Explain: databaseFault}, func(ctx context.Context, pg *pgserver.Server, r *crashtest.Round) error {
		sig := syscall.SIGQUIT // immediate: no checkpoint, crash recovery at start
		if r.Index%2 == 1 {
			sig = syscall.SIGINT // fast: sessions cut, clean checkpoint
		}
		pg.Stop(sig)
		wctx, cancel := context.WithTimeout(ctx, 15*time.Second)
		d, err := crashtest.AwaitReadiness(wctx, r.Client, false)
		cancel()
		if err != nil {
			return err
		}
		t.Logf("round %d: database stopped with %v; /readyz not ready after %v", r.Index, sig, d.Round(time.Millisecond))
		time.Sleep(time.Duration(500+r.Rand.IntN(1500)) * time.Millisecond)
		if err := pg.Start(); err != nil {
			return err
		}
		wctx, cancel = context.WithTimeout(ctx, 60*time.Second)
		defer cancel()
		d, err = crashtest.AwaitAck(wctx, r.Client, r.Ledger, "probe-"+strings.Repeat("x", r.Index+1))
		if err != nil {
			return err
		}
		r.Recovered(d)
		if _, err := crashtest.AwaitReadiness(wctx, r.Client, true); err != nil {
			return err
		}
		return nil
	})
}

// The event store's append statements terminated by pg_terminate_backend
// again and again for a while: the appends in them fail (their requests
// are of unknown outcome to the client), nothing acknowledged is lost,
// and serve goes on without a restart.
func TestPostgresTerminateMidAppend(t *testing.T) {
	roundsOnPostgres(t, crashtest.AuditConfig{Explain: databaseFault}, func(ctx context.Context, pg *pgserver.Server, r *crashtest.Round) error {
		end := time.Now().Add(time.Second)
		killed := 0
		for time.Now().Before(end) {
			n, err := pg.TerminateBackends(ctx, "factum", "INSERT INTO")
			if err != nil {
				return err
			}
			killed += n
			time.Sleep(time.Duration(5+r.Rand.IntN(30)) * time.Millisecond)
		}
		t.Logf("round %d: terminated %d backends inside an INSERT", r.Index, killed)
		if killed == 0 {
			t.Errorf("round %d: no append was caught in flight: the fault did not strike", r.Index)
		}
		wctx, cancel := context.WithTimeout(ctx, 60*time.Second)
		defer cancel()
		d, err := crashtest.AwaitAck(wctx, r.Client, r.Ledger, "probe-"+strings.Repeat("x", r.Index+1))
		r.Recovered(d)
		return err
	})
}
