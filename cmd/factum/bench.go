package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/command"
	"github.com/factum-go/factum/examples/cart"
	"github.com/factum-go/factum/httpapi"
	"github.com/factum-go/factum/internal/loadgen"
	"github.com/spf13/cobra"
)

// benchOptions configures a load run.
type benchOptions struct {
	URL         string
	Concurrency int
	Total       int
	Wait        string
	JSON        string
	Quiet       bool
	store       storeOptions
}

// benchReport is what `factum bench --json` writes.
type benchReport struct {
	Target string `json:"target"`
	Stage  string `json:"stage"`
	loadgen.Report
}

// commandsPerCart is how many add_item commands one cart receives: the
// load mixes creating aggregates with updating cached ones.
const commandsPerCart = 10

func newBenchCmd() *cobra.Command {
	var opts benchOptions
	cmd := &cobra.Command{
		Use:   "bench",
		Short: "Send add_item commands at a concurrency and report throughput and latency",
		Long: `Send --total add_item commands from --concurrency workers, each cart getting ` + fmt.Sprint(commandsPerCart) + `
commands, and wait for --wait on each. Against --url over HTTP, or, without
--url, against an in-process runtime on the store the serve flags select.
Prints throughput and p50/p95/p99/max latency; --json FILE writes them.`,
		Example: `  factum bench --url http://127.0.0.1:8080 --concurrency 16 --total 20000
  factum bench --memory --concurrency 64 --wait SENT --json bench.json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return bench(cmd.Context(), opts, cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	f := cmd.Flags()
	f.StringVar(&opts.URL, "url", "", "server URL; empty runs the service in process")
	f.IntVar(&opts.Concurrency, "concurrency", 16, "concurrent workers")
	f.IntVar(&opts.Total, "total", 10000, "commands to send")
	f.StringVar(&opts.Wait, "wait", "PROCESSED", "stage each command waits for")
	f.StringVar(&opts.JSON, "json", "", "write the figures as JSON to this file")
	f.BoolVar(&opts.Quiet, "quiet", false, "no progress bar")
	f.StringVar(&opts.store.DataDir, "data-dir", envOr("FACTUM_DATA_DIR", "./factum-data"), "in process: data directory of the embedded store")
	f.StringVar(&opts.store.PostgresURL, "postgres-url", "", "in process: use PostgreSQL at this URL")
	f.BoolVar(&opts.store.Memory, "memory", false, "in process: keep everything in memory")
	return cmd
}

func bench(ctx context.Context, opts benchOptions, stdout, stderr io.Writer) error {
	stage, err := factum.ParseCommandStage(opts.Wait)
	if err != nil {
		return err
	}
	run := factum.NewID()[:8]
	var op loadgen.Op
	target := opts.URL
	if opts.URL != "" {
		op = httpOp(opts, stage, run)
	} else {
		s, err := startServer(ctx, serveOptions{storeOptions: opts.store, Addr: "127.0.0.1:0"}, io.Discard)
		if err != nil {
			return err
		}
		defer s.Shutdown(context.WithoutCancel(ctx))
		target = "in-process (" + s.store.where + ")"
		op = inProcessOp(s, stage, run)
	}
	cfg := loadgen.Config{Concurrency: opts.Concurrency, Total: opts.Total}
	if !opts.Quiet {
		cfg.Progress = progressBar(stderr, opts.Total)
	}
	rep, err := loadgen.Run(ctx, cfg, op)
	if !opts.Quiet {
		fmt.Fprintln(stderr)
	}
	out := benchReport{Target: target, Stage: stage.String(), Report: rep}
	printReport(stdout, out)
	if opts.JSON != "" {
		b, jerr := json.MarshalIndent(out, "", "  ")
		if jerr == nil {
			jerr = os.WriteFile(opts.JSON, append(b, '\n'), 0o644)
		}
		if jerr != nil {
			return jerr
		}
	}
	return err
}

// benchTarget names the cart and item of operation i.
func benchTarget(run string, i int) (id, sku, requestID string) {
	return fmt.Sprintf("bench-%s-%d", run, i/commandsPerCart), fmt.Sprintf("sku-%d", i%commandsPerCart), fmt.Sprintf("%s-%d", run, i)
}

func inProcessOp(s *server, stage factum.CommandStage, run string) loadgen.Op {
	named := carts
	plan := command.Wait(stage)
	gw := s.rt.Gateway()
	return func(ctx context.Context, i int) error {
		id, sku, req := benchTarget(run, i)
		cmd := factum.NewCommand(named.WithID(id), cart.AddItem{SKU: sku, Qty: 1}).WithRequestID(req)
		var err error
		if stage == factum.StageSent {
			_, err = gw.Send(ctx, cmd)
		} else {
			_, err = gw.SendAndWait(ctx, cmd, plan)
		}
		return err
	}
}

func httpOp(opts benchOptions, stage factum.CommandStage, run string) loadgen.Op {
	client := &http.Client{Transport: &http.Transport{
		MaxIdleConns: opts.Concurrency, MaxIdleConnsPerHost: opts.Concurrency, IdleConnTimeout: time.Minute,
	}}
	base := strings.TrimRight(opts.URL, "/")
	return func(ctx context.Context, i int) error {
		id, sku, req := benchTarget(run, i)
		body := fmt.Sprintf(`{"sku":%q,"qty":1}`, sku)
		r, err := http.NewRequestWithContext(ctx, "POST", base+"/cart/"+id+"/add_item", strings.NewReader(body))
		if err != nil {
			return err
		}
		r.Header.Set("Content-Type", "application/json")
		r.Header.Set(httpapi.HeaderRequestID, req)
		r.Header.Set(httpapi.HeaderWaitStage, stage.String())
		res, err := client.Do(r)
		if err != nil {
			return err
		}
		defer res.Body.Close()
		b, err := io.ReadAll(res.Body)
		if err != nil {
			return err
		}
		if res.StatusCode != http.StatusOK {
			var e httpapi.ErrorBody
			if json.Unmarshal(b, &e) != nil || !e.Code.Valid() {
				return factum.Errorf(factum.CodeInternalServerError, "HTTP %d: %s", res.StatusCode, bytes.TrimSpace(b))
			}
			return factum.NewError(e.Code, e.Message)
		}
		return nil
	}
}

// progressBar draws one self-overwriting progress line.
func progressBar(w io.Writer, total int) func(int, time.Duration) {
	const width = 30
	return func(done int, elapsed time.Duration) {
		filled := done * width / total
		rate := 0.0
		if elapsed > 0 {
			rate = float64(done) / elapsed.Seconds()
		}
		fmt.Fprintf(w, "\r[%s%s] %3d%% %d/%d  %.0f commands/s ",
			strings.Repeat("#", filled), strings.Repeat(".", width-filled), done*100/total, done, total, rate)
	}
}

func printReport(w io.Writer, r benchReport) {
	fmt.Fprintf(w, "target       %s\n", r.Target)
	fmt.Fprintf(w, "wait stage   %s\n", r.Stage)
	fmt.Fprintf(w, "concurrency  %d\n", r.Concurrency)
	fmt.Fprintf(w, "commands     %d (%d ok, %d failed", r.Total, r.Succeeded, r.Failed)
	codes := make([]string, 0, len(r.ErrorsByCode))
	for c := range r.ErrorsByCode {
		codes = append(codes, c)
	}
	sort.Strings(codes)
	for _, c := range codes {
		fmt.Fprintf(w, "; %s %d", c, r.ErrorsByCode[c])
	}
	fmt.Fprintf(w, ") in %.2fs\n", r.Seconds)
	fmt.Fprintf(w, "throughput   %.0f commands/s\n", r.OpsPerSec)
	l := r.LatencyMs
	fmt.Fprintf(w, "latency ms   p50 %.3f  p95 %.3f  p99 %.3f  max %.3f  mean %.3f\n", l.P50, l.P95, l.P99, l.Max, l.Mean)
}
