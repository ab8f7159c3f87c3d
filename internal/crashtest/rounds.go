package crashtest

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/factum-go/factum/internal/serveproc"
)

// SeedEnv names the variable that replays a run: its value is the seed a
// failing run printed.
const SeedEnv = "FACTUM_CRASH_SEED"

// Seed returns the seed of SeedEnv, or a fresh one; it logs it either way,
// so that every run can be replayed.
func Seed(t testing.TB) uint64 {
	t.Helper()
	if v := os.Getenv(SeedEnv); v != "" {
		s, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			t.Fatalf("%s=%q: %v", SeedEnv, v, err)
		}
		t.Logf("seed %d (from %s)", s, SeedEnv)
		return s
	}
	s := uint64(time.Now().UnixNano())
	t.Logf("seed %d (replay with %s=%d)", s, SeedEnv, s)
	return s
}

// RoundsConfig configures Rounds.
type RoundsConfig struct {
	// Seed drives every random choice (see Seed).
	Seed uint64
	// Rounds is the number of fault rounds (default 3).
	Rounds int
	// Start starts serve on the test's data; each call must find the data
	// the previous process left. Required.
	Start func(ctx context.Context) (*serveproc.Process, error)
	// Setup, if set, runs once against the first process (restocking
	// inventories, say), recording in the ledger.
	Setup func(ctx context.Context, c *Client, led *Ledger) error
	// Fault strikes once per round, while the load runs; required. It
	// records the recovery time with Round.Recovered.
	Fault func(ctx context.Context, r *Round) error
	// Load shapes the clients' commands; Seed and Round are set per round.
	Load LoadConfig
	// FaultAfter is the range of the random delay between the start of a
	// round's load and the fault (default 300 ms to 2 s).
	FaultAfterMin, FaultAfterMax time.Duration
	// LoadAfter is how long the load goes on after Fault returns
	// (default 1 s), so that the recovered service is written to.
	LoadAfter time.Duration
	// Audit configures the audit after each round.
	Audit AuditConfig
}

// Figures sums up a run of Rounds.
type Figures struct {
	Rounds        int
	Sent          int
	Acked         int
	Settled       int
	Rejected      int
	Lost          int
	Duplicated    int
	Compensations int
	// Recovery holds each round's recovery time (as Fault measured it).
	Recovery []time.Duration
}

// MaxRecovery is the longest recovery.
func (f Figures) MaxRecovery() time.Duration {
	var m time.Duration
	for _, d := range f.Recovery {
		m = max(m, d)
	}
	return m
}

func (f Figures) String() string {
	return fmt.Sprintf("rounds=%d sent=%d acked=%d settled-after-fault=%d rejected=%d lost=%d duplicated=%d compensations=%d max-recovery=%v recovery=%v",
		f.Rounds, f.Sent, f.Acked, f.Settled, f.Rejected, f.Lost, f.Duplicated, f.Compensations, f.MaxRecovery().Round(time.Millisecond), f.Recovery)
}

// Round is one round in progress, handed to Fault.
type Round struct {
	// Index counts rounds from 0; Rand is the round's random source.
	Index int
	Rand  *rand.Rand
	// Client is the load's client; Ledger the run's ledger.
	Client *Client
	Ledger *Ledger

	h *run
}

// Process is the serve process running now.
func (r *Round) Process() *serveproc.Process { return r.h.proc }

// KillServe kills the serve process with SIGKILL and stops the load (its
// requests in flight become unknown).
func (r *Round) KillServe() {
	r.h.proc.Kill()
	r.h.stopLoad()
}

// RestartServe starts serve again on the same data, points the client at
// it and returns how long it took to be ready.
func (r *Round) RestartServe(ctx context.Context) (time.Duration, error) {
	start := time.Now()
	p, err := r.h.cfg.Start(ctx)
	if err != nil {
		return 0, err
	}
	r.h.proc = p
	r.Client.SetBase(p.URL)
	return time.Since(start), nil
}

// Recovered records the round's recovery time.
func (r *Round) Recovered(d time.Duration) { r.h.recovery = d }

type run struct {
	cfg      RoundsConfig
	proc     *serveproc.Process
	stopLoad func()
	recovery time.Duration
}

// Result is what Rounds leaves: the totals, and the client and ledger for
// further checks (CheckSagasComplete, say) against the last process.
type Result struct {
	Figures
	Client *Client
	Ledger *Ledger
}

// Rounds runs cfg.Rounds rounds of load, fault, recovery, settlement of
// unknown requests and audit, failing t with what the audit found. It
// logs each round's figures and returns the totals.
func Rounds(t testing.TB, cfg RoundsConfig) *Result {
	t.Helper()
	if cfg.Rounds <= 0 {
		cfg.Rounds = 3
	}
	if cfg.FaultAfterMax <= 0 {
		cfg.FaultAfterMin, cfg.FaultAfterMax = 300*time.Millisecond, 2*time.Second
	}
	if cfg.LoadAfter <= 0 {
		cfg.LoadAfter = time.Second
	}
	ctx := context.Background()
	h := &run{cfg: cfg}
	p, err := cfg.Start(ctx)
	if err != nil {
		t.Fatal(err)
	}
	h.proc = p
	t.Cleanup(func() {
		if !h.proc.Exited() {
			h.proc.Kill()
		}
	})
	c := NewClient(p.URL, 10*time.Second)
	led := NewLedger()
	if cfg.Setup != nil {
		if err := cfg.Setup(ctx, c, led); err != nil {
			t.Fatalf("setup: %v", err)
		}
	}
	var fig Figures
	for i := range cfg.Rounds {
		rng := rand.New(rand.NewPCG(cfg.Seed, uint64(i)))
		r := &Round{Index: i, Rand: rng, Client: c, Ledger: led, h: h}
		lc := cfg.Load
		lc.Seed, lc.Round = rng.Uint64(), i
		lctx, cancel := context.WithCancel(ctx)
		var sent int
		var wg sync.WaitGroup
		wg.Go(func() { sent = Load(lctx, c, led, lc) })
		var once sync.Once
		h.stopLoad = func() { once.Do(func() { cancel(); wg.Wait() }) }
		h.recovery = 0

		delay := cfg.FaultAfterMin + time.Duration(rng.Int64N(int64(cfg.FaultAfterMax-cfg.FaultAfterMin)+1))
		time.Sleep(delay)
		if err := cfg.Fault(ctx, r); err != nil {
			h.stopLoad()
			t.Fatalf("round %d: fault: %v\nserve output:\n%s", i, err, h.proc.Output())
		}
		if h.proc.Exited() {
			h.stopLoad()
			t.Fatalf("round %d: serve exited after the fault without being restarted:\n%s", i, h.proc.Output())
		}
		time.Sleep(cfg.LoadAfter)
		h.stopLoad()

		sctx, scancel := context.WithTimeout(ctx, 2*time.Minute)
		settled := Settle(sctx, c, led)
		scancel()
		if _, unknown, _ := led.Counts(); unknown > 0 {
			t.Fatalf("round %d: %d requests still of unknown outcome after 2 minutes of retries", i, unknown)
		}
		actx, acancel := context.WithTimeout(ctx, 5*time.Minute)
		rep, err := Audit(actx, c, led, cfg.Audit)
		acancel()
		if err != nil {
			t.Fatalf("round %d: audit: %v\nserve output:\n%s", i, err, h.proc.Output())
		}
		acked, _, rejected := led.Counts()
		fig.Rounds++
		fig.Sent += sent
		fig.Settled += settled
		fig.Acked, fig.Rejected = acked, rejected
		fig.Lost, fig.Duplicated, fig.Compensations = rep.Lost, rep.Duplicated, rep.Compensations
		fig.Recovery = append(fig.Recovery, h.recovery)
		t.Logf("round %d: fault after %v, sent %d, settled %d after the fault; audit: %d aggregates, %d streams, %d acknowledged, %d lost, %d duplicated, %d compensation records; recovery %v",
			i, delay.Round(time.Millisecond), sent, settled, rep.Aggregates, rep.Streams, rep.Acked, rep.Lost, rep.Duplicated, rep.Compensations, h.recovery.Round(time.Millisecond))
		for _, e := range rep.Explained {
			t.Logf("round %d: compensation record explained by the fault: %s", i, e)
		}
		if !rep.OK() {
			for _, p := range rep.Problems {
				t.Errorf("round %d: %s", i, p)
			}
			t.FailNow()
		}
	}
	t.Logf("totals: %s", fig)
	return &Result{Figures: fig, Client: c, Ledger: led}
}
