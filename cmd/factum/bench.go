package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/url"
	"os"
	"runtime/debug"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/auth"
	"github.com/factum-go/factum/command"
	"github.com/factum-go/factum/examples/cart"
	"github.com/factum-go/factum/httpapi"
	"github.com/factum-go/factum/internal/loadgen"
	"github.com/spf13/cobra"
)

// benchOptions configures a load run.
type benchOptions struct {
	URL         string
	APIKey      string
	InProcess   bool
	Concurrency int
	Total       int
	// Carts spreads the commands over this many carts in turn; 0 gives
	// each cart commandsPerCart commands.
	Carts    int
	Duration time.Duration
	Wait     string
	JSON     bool
	Out      string
	Quiet    bool
	// AllowFailures exits 0 even when requests failed.
	AllowFailures bool
	Timeout       time.Duration
	store         storeOptions
}

// benchReport is what `factum bench --json` prints.
type benchReport struct {
	Target string `json:"target"`
	Stage  string `json:"stage"`
	// RunID prefixes every cart and request ID of the run.
	RunID string `json:"runId"`
	loadgen.Report
}

// commandsPerCart is how many add_item commands one cart receives: the
// load mixes creating aggregates with updating cached ones.
const commandsPerCart = 10

// errRequestsFailed makes bench exit 1 after printing its report.
var errRequestsFailed = errors.New("some requests failed (see the report; --allow-failures exits 0 anyway)")

func newBenchCmd() *cobra.Command {
	var opts benchOptions
	cmd := &cobra.Command{
		Use:   "bench",
		Short: "Send add_item commands at a concurrency and report throughput and latency",
		Long: `Send --total add_item commands from --concurrency workers, each cart getting ` + strconv.Itoa(commandsPerCart) + `
commands (or over --carts carts in turn), and wait for --wait on each. Every
run has its own run ID, so no two runs send the same request IDs.

Against --url (or FACTUM_URL) over HTTP; with --in-process (or no URL at
all), against a runtime in this process: on a temporary SQLite database by
default, or on --data-dir (refused while another process holds it),
--postgres-url or --memory.

Throughput counts only commands that did new work; duplicates (answers
replayed for a request ID already appended) and failures are reported
apart, failures by cause. The server's own time (Server-Timing) is shown
beside the client's latency when the server reports it. Exits 1 when any
command failed, unless --allow-failures.`,
		Example: `  factum bench --url http://127.0.0.1:8080 --concurrency 16 --total 20000
  FACTUM_URL=http://127.0.0.1:8080 factum bench --wait SNAPSHOT --json
  factum bench --in-process --memory --concurrency 64 --wait SENT --out bench.json
  factum bench --url http://127.0.0.1:8081,http://127.0.0.1:8082 --carts 1 --concurrency 400 --total 400`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return bench(cmd.Context(), opts, cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	f := cmd.Flags()
	f.StringVar(&opts.URL, "url", envOr("FACTUM_URL", ""), "server URL (FACTUM_URL), or several, comma-separated, sent to in turn (the instances of one cluster); empty runs the service in process")
	f.StringVar(&opts.APIKey, "api-key", "", "API key to send (default FACTUM_API_KEY)")
	f.BoolVar(&opts.InProcess, "in-process", false, "run the service in this process even when FACTUM_URL is set")
	f.IntVar(&opts.Concurrency, "concurrency", 16, "concurrent workers")
	f.IntVar(&opts.Total, "total", 10000, "commands to send (with --duration: at most; 0: no limit)")
	f.IntVar(&opts.Carts, "carts", 0, "spread the commands over this many carts, in turn (1: all on one cart, the contended case), each holding "+strconv.Itoa(cartCapacity)+" commands, so --total must be at most that many times this; 0: a new cart every "+strconv.Itoa(commandsPerCart)+" commands")
	f.DurationVar(&opts.Duration, "duration", 0, "stop sending after this long, such as 10s (a run of fixed length, like wrk -d)")
	f.StringVar(&opts.Wait, "wait", "PROCESSED", "stage each command waits for")
	f.BoolVar(&opts.JSON, "json", false, "print the report as JSON")
	f.StringVar(&opts.Out, "out", "", "also write the JSON report to this file")
	f.BoolVarP(&opts.Quiet, "quiet", "q", false, "no progress bar")
	f.BoolVar(&opts.AllowFailures, "allow-failures", false, "exit 0 even when commands failed")
	f.DurationVar(&opts.Timeout, "timeout", defaultTimeout, "per-request timeout over HTTP")
	f.StringVar(&opts.store.DataDir, "data-dir", "", "in process: data directory of the embedded store (default: a temporary one)")
	f.StringVar(&opts.store.PostgresURL, "postgres-url", "", "in process: use PostgreSQL at this URL")
	f.BoolVar(&opts.store.Memory, "memory", false, "in process: keep everything in memory")
	return cmd
}

// newRunID returns a run ID no other run shares: 64 random bits.
func newRunID() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

func bench(ctx context.Context, opts benchOptions, stdout, stderr io.Writer) error {
	stage, err := factum.ParseCommandStage(opts.Wait)
	if err != nil {
		return err
	}
	if opts.Concurrency < 1 || opts.Total < 0 || opts.Duration < 0 || (opts.Total == 0 && opts.Duration == 0) {
		return usageError{fmt.Errorf("--concurrency must be at least 1, and --total at least 1 unless --duration is set")}
	}
	if opts.Carts < 0 {
		return usageError{fmt.Errorf("--carts must be 0 or more")}
	}
	// A --carts past math.MaxInt/cartCapacity holds more than any --total:
	// the product would overflow, so it is not taken.
	if opts.Carts > 0 && opts.Carts <= math.MaxInt/cartCapacity {
		if most := opts.Carts * cartCapacity; opts.Total == 0 || opts.Total > most {
			return usageError{fmt.Errorf("--carts %d hold at most %d commands (a cart holds %d items of at most %d each): set --total to at most that (0, with --duration, is no limit), or spread the commands over more carts", opts.Carts, most, cart.DefaultLimits.MaxItems, cart.DefaultLimits.MaxQuantity)}
		}
	}
	run := newRunID()
	var op loadgen.Op
	var target string
	if opts.URL != "" && !opts.InProcess {
		var ops []loadgen.Op
		var bases []string
		for raw := range strings.SplitSeq(opts.URL, ",") {
			raw = strings.TrimSpace(raw)
			if raw == "" {
				return usageError{fmt.Errorf("--url %q has an empty URL: give the URLs separated by single commas", opts.URL)}
			}
			base, err := parseBaseURL(raw)
			if err != nil {
				return err
			}
			bases = append(bases, base)
			ops = append(ops, httpOp(base, opts, stage, run))
		}
		target = strings.Join(bases, ",")
		op = inTurn(ops, opts.Carts)
	} else {
		so := opts.store
		if so.DataDir == "" && so.PostgresURL == "" && !so.Memory {
			dir, err := os.MkdirTemp("", "factum-bench-")
			if err != nil {
				return err
			}
			defer os.RemoveAll(dir)
			so.DataDir = dir
		}
		s, err := startServer(ctx, serveOptions{storeOptions: so, Addr: "127.0.0.1:0"}, io.Discard)
		if err != nil {
			return err
		}
		defer s.Shutdown(context.WithoutCancel(ctx))
		target = "in-process (" + s.store.where + ")"
		op = inProcessOp(s, stage, run, opts.Carts)
	}
	cfg := loadgen.Config{Concurrency: opts.Concurrency, Total: opts.Total, Duration: opts.Duration}
	if !opts.Quiet {
		cfg.Progress = progressBar(stderr, opts.Total, opts.Duration)
	}
	// The client shares the machine with the server: collect garbage less
	// often, so the bench costs less of what it measures.
	defer debug.SetGCPercent(debug.SetGCPercent(400))
	rep, err := loadgen.Run(ctx, cfg, op)
	if !opts.Quiet {
		fmt.Fprintln(stderr)
	}
	out := benchReport{Target: target, Stage: stage.String(), RunID: run, Report: rep}
	b, jerr := json.MarshalIndent(out, "", "  ")
	if jerr != nil {
		return jerr
	}
	if opts.JSON {
		fmt.Fprintf(stdout, "%s\n", b)
	} else {
		printReport(stdout, out)
	}
	if opts.Out != "" {
		if werr := os.WriteFile(opts.Out, append(b, '\n'), 0o644); werr != nil {
			return werr
		}
	}
	if err != nil {
		return err
	}
	if rep.Failed > 0 && !opts.AllowFailures {
		return errRequestsFailed
	}
	return nil
}

// cartCapacity is how many add_item commands of quantity 1 one cart
// takes under cart.DefaultLimits.
var cartCapacity = cart.DefaultLimits.MaxItems * cart.DefaultLimits.MaxQuantity

// benchTarget names the cart and item of operation i of a run spread over
// that many carts (0: commandsPerCart commands a cart). Spread over n
// carts, cart i%n gets operation i, its items taken in turn, so that a
// cart takes cartCapacity commands before one is refused.
func benchTarget(run string, i, spread int) (id, sku, requestID string) {
	req := run + "-" + strconv.Itoa(i)
	if spread > 0 {
		return "bench-" + run + "-" + strconv.Itoa(i%spread), "sku-" + strconv.Itoa(i/spread%cart.DefaultLimits.MaxItems), req
	}
	return "bench-" + run + "-" + strconv.Itoa(i/commandsPerCart), "sku-" + strconv.Itoa(i%commandsPerCart), req
}

// inTurn returns an operation that runs operation i of a run spread over
// that many carts (as benchTarget takes it) on one of ops: the targets take
// the load in turn, and every cart's commands go to each target in turn.
// Spread over n carts, operation i is the (i/n)th of cart i%n; taking the
// target by i alone would send all of a cart's commands to one target
// whenever n and len(ops) share a factor (two carts through two URLs: each
// cart through one), and the targets would never contend on a cart.
func inTurn(ops []loadgen.Op, spread int) loadgen.Op {
	if len(ops) == 1 {
		return ops[0]
	}
	k := len(ops)
	return func(ctx context.Context, i int) (loadgen.Outcome, error) {
		turn := i % k
		if spread > 0 {
			// (cart + its operation's rank) mod k, summed in range.
			turn = (i%spread%k + i/spread%k) % k
		}
		return ops[turn](ctx, i)
	}
}

func inProcessOp(s *server, stage factum.CommandStage, run string, spread int) loadgen.Op {
	named := carts
	plan := command.Wait(stage)
	gw := s.rt.Gateway()
	return func(ctx context.Context, i int) (loadgen.Outcome, error) {
		id, sku, req := benchTarget(run, i, spread)
		cmd := factum.NewCommand(named.WithID(id), cart.AddItem{SKU: sku, Qty: 1}).WithRequestID(req)
		var (
			res command.Result
			err error
		)
		if stage == factum.StageSent {
			res, err = gw.Send(ctx, cmd)
		} else {
			res, err = gw.SendAndWait(ctx, cmd, plan)
		}
		return loadgen.Outcome{Duplicate: res.Duplicate}, err
	}
}

func httpOp(base string, opts benchOptions, stage factum.CommandStage, run string) loadgen.Op {
	send := httpSender(base, opts)
	key := apiKey(opts.APIKey)
	return func(ctx context.Context, i int) (loadgen.Outcome, error) {
		id, sku, req := benchTarget(run, i, opts.Carts)
		body := `{"sku":"` + sku + `","qty":1}`
		headers := [][2]string{{httpapi.HeaderRequestID, req}, {httpapi.HeaderWaitStage, stage.String()}}
		if key != "" {
			headers = append(headers, [2]string{auth.HeaderAPIKey, key})
		}
		status, header, b, err := send(ctx, "/cart/"+id+"/add_item", headers, body)
		if err != nil {
			return loadgen.Outcome{}, &loadgen.TransportError{Err: err}
		}
		out := loadgen.Outcome{ServerTime: serverTiming(header.Get(httpapi.HeaderServerTiming))}
		if status != http.StatusOK {
			var e httpapi.ErrorBody
			if json.Unmarshal(b, &e) != nil || !e.Code.Valid() {
				return out, &loadgen.TransportError{Err: fmt.Errorf("HTTP %d without an error body: %.200s", status, bytes.TrimSpace(b))}
			}
			return out, factum.NewError(e.Code, e.Message)
		}
		if t := bytes.TrimSpace(b); len(t) < 2 || t[0] != '{' || t[len(t)-1] != '}' {
			return out, &loadgen.TransportError{Err: fmt.Errorf("HTTP 200 whose body is not a result: %.200s", b)}
		}
		// A result is a duplicate when "duplicate" is true; the member is
		// left out otherwise (omitempty), so a look for it is enough.
		out.Duplicate = bytes.Contains(b, []byte(`"duplicate":true`))
		return out, nil
	}
}

// sender posts one request and returns the answer's status, headers and
// body.
type sender func(ctx context.Context, path string, headers [][2]string, body string) (int, http.Header, []byte, error)

// httpSender sends over plain connections for http URLs (connPool) and
// through net/http for https.
func httpSender(base string, opts benchOptions) sender {
	u, err := url.Parse(base)
	if err == nil && u.Scheme == "http" {
		return newConnPool(u, opts.Concurrency, opts.Timeout).post
	}
	client := &http.Client{Timeout: opts.Timeout, Transport: &http.Transport{
		MaxIdleConns: opts.Concurrency, MaxIdleConnsPerHost: opts.Concurrency, IdleConnTimeout: time.Minute,
	}}
	return func(ctx context.Context, path string, headers [][2]string, body string) (int, http.Header, []byte, error) {
		r, err := http.NewRequestWithContext(ctx, "POST", base+path, strings.NewReader(body))
		if err != nil {
			return 0, nil, nil, err
		}
		r.Header.Set("Content-Type", "application/json")
		for _, h := range headers {
			r.Header.Set(h[0], h[1])
		}
		res, err := client.Do(r)
		if err != nil {
			return 0, nil, nil, err
		}
		defer res.Body.Close()
		b, err := io.ReadAll(res.Body)
		return res.StatusCode, res.Header, b, err
	}
}

// serverTiming reads the "app" metric of a Server-Timing header, 0 when
// there is none.
func serverTiming(h string) time.Duration {
	for metric := range strings.SplitSeq(h, ",") {
		name, params, _ := strings.Cut(strings.TrimSpace(metric), ";")
		if name != "app" {
			continue
		}
		for p := range strings.SplitSeq(params, ";") {
			if v, ok := strings.CutPrefix(strings.TrimSpace(p), "dur="); ok {
				if ms, err := strconv.ParseFloat(v, 64); err == nil && ms >= 0 {
					return time.Duration(ms * float64(time.Millisecond))
				}
			}
		}
	}
	return 0
}

// progressBar draws one self-overwriting progress line.
func progressBar(w io.Writer, total int, duration time.Duration) func(int, time.Duration) {
	const width = 30
	return func(done int, elapsed time.Duration) {
		if duration > 0 {
			rate := float64(done) / max(elapsed.Seconds(), 1e-9)
			fmt.Fprintf(w, "\r%5.1fs/%s  %d answers  %.0f answers/s ", elapsed.Seconds(), duration, done, rate)
			return
		}
		filled := min(done*width/total, width)
		rate := 0.0
		if elapsed > 0 {
			rate = float64(done) / elapsed.Seconds()
		}
		fmt.Fprintf(w, "\r[%s%s] %3d%% %d/%d  %.0f answers/s ",
			strings.Repeat("#", filled), strings.Repeat(".", width-filled), done*100/total, done, total, rate)
	}
}

func printReport(w io.Writer, r benchReport) {
	fmt.Fprintf(w, "target       %s\n", r.Target)
	fmt.Fprintf(w, "run          %s\n", r.RunID)
	fmt.Fprintf(w, "wait stage   %s\n", r.Stage)
	fmt.Fprintf(w, "concurrency  %d\n", r.Concurrency)
	fmt.Fprintf(w, "commands     %d in %.2fs: %d ok, %d duplicate, %d failed\n", r.Total, r.Seconds, r.Succeeded, r.Duplicates, r.Failed)
	causes := make([]string, 0, len(r.FailuresByCause))
	for c := range r.FailuresByCause {
		causes = append(causes, c)
	}
	sort.Strings(causes)
	for _, c := range causes {
		fmt.Fprintf(w, "  failed     %d %s\n", r.FailuresByCause[c], c)
	}
	fmt.Fprintf(w, "throughput   %.0f commands/s (new appends only)\n", r.OpsPerSec)
	if r.Succeeded == 0 {
		fmt.Fprintf(w, "latency ms   none: no command succeeded\n")
		return
	}
	l := r.LatencyMs
	fmt.Fprintf(w, "latency ms   p50 %.3f  p95 %.3f  p99 %.3f  max %.3f  mean %.3f (client)\n", l.P50, l.P95, l.P99, l.Max, l.Mean)
	if s := r.ServerLatencyMs; s != nil {
		fmt.Fprintf(w, "             p50 %.3f  p95 %.3f  p99 %.3f  max %.3f  mean %.3f (server, %d reported)\n", s.P50, s.P95, s.P99, s.Max, s.Mean, r.ServerReported)
	}
	if r.Duplicates > 0 {
		fmt.Fprintf(w, "warning      %d answers were duplicates of earlier requests: they did no work and are not in the throughput\n", r.Duplicates)
	}
}

// defaultTimeout is the per-request timeout of the client commands.
const defaultTimeout = 30 * time.Second
