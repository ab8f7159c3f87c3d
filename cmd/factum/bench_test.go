package main

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"strconv"
	"strings"
	"testing"

	"github.com/factum-go/factum"
)

// runBench runs `factum bench --json` with args and decodes its report.
func runBench(t *testing.T, args ...string) (int, benchReport, string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code := run(context.Background(), append([]string{"bench", "--json", "--quiet"}, args...), &out, &errOut)
	var rep benchReport
	if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
		t.Fatalf("bench output %q (stderr %q): %v", out.String(), errOut.String(), err)
	}
	return code, rep, errOut.String()
}

// TestBenchBackToBackRunsBothAppend: two runs one right after the other
// each append all their commands (each run has its own request IDs), and
// the second is not answered with the first one's duplicates.
func TestBenchBackToBackRunsBothAppend(t *testing.T) {
	s := startTestServer(t, t.TempDir())
	var runs []benchReport
	for range 2 {
		code, rep, stderr := runBench(t, "--url", s.URL, "--concurrency", "4", "--total", "40")
		if code != 0 {
			t.Fatalf("bench exit %d: %s", code, stderr)
		}
		runs = append(runs, rep)
	}
	if runs[0].RunID == runs[1].RunID {
		t.Fatalf("both runs have run ID %q: the second resends the first's request IDs", runs[0].RunID)
	}
	for i, rep := range runs {
		if rep.Succeeded != 40 || rep.Duplicates != 0 || rep.Failed != 0 {
			t.Fatalf("run %d: %+v, want 40 new appends", i, rep.Report)
		}
		// The server has the run's carts, each at version 10.
		id, _, _ := benchTarget(rep.RunID, 0, 0)
		status, b := get(t, s.URL+"/cart/"+id+"/state")
		if status != 200 || !strings.Contains(string(b), `"version":10`) {
			t.Fatalf("run %d: cart %s: %d %s", i, id, status, b)
		}
	}
	// Resending one run's request IDs is reported as duplicates, not as
	// throughput.
	op := httpOp(s.URL, benchOptions{Concurrency: 1, Timeout: defaultTimeout}, mustStage(t, "PROCESSED"), runs[0].RunID)
	out, err := op(context.Background(), 0)
	if err != nil || !out.Duplicate {
		t.Fatalf("resent request: %+v %v, want a duplicate", out, err)
	}
}

// TestBenchSpreadsOverURLsAndCarts: with several URLs the commands go to
// them in turn, and --carts 1 puts every command on one cart: each of two
// servers (two stores) gets half of them, all on its one cart.
func TestBenchSpreadsOverURLsAndCarts(t *testing.T) {
	a, b := startTestServer(t, t.TempDir()), startTestServer(t, t.TempDir())
	code, rep, stderr := runBench(t, "--url", a.URL+" , "+b.URL, "--carts", "1", "--concurrency", "8", "--total", "40")
	if code != 0 || rep.Succeeded != 40 || rep.Failed != 0 {
		t.Fatalf("bench exit %d: %+v %s", code, rep.Report, stderr)
	}
	if rep.Target != a.URL+","+b.URL {
		t.Errorf("target %q, want both URLs", rep.Target)
	}
	id, _, _ := benchTarget(rep.RunID, 0, 1)
	for _, s := range []string{a.URL, b.URL} {
		status, body := get(t, s+"/cart/"+id+"/state")
		if status != 200 || !strings.Contains(string(body), `"version":20`) {
			t.Errorf("%s: cart %s: %d %s, want version 20", s, id, status, body)
		}
	}
}

// TestBenchSendsEachCartThroughEveryURL: spread over as many carts as
// there are URLs (or a multiple), each cart's commands still go to every
// URL in turn, so that a cluster's instances contend on every cart: each
// of two servers (two stores) gets half of each cart's commands.
func TestBenchSendsEachCartThroughEveryURL(t *testing.T) {
	a, b := startTestServer(t, t.TempDir()), startTestServer(t, t.TempDir())
	code, rep, stderr := runBench(t, "--url", a.URL+","+b.URL, "--carts", "2", "--concurrency", "4", "--total", "40")
	if code != 0 || rep.Succeeded != 40 {
		t.Fatalf("bench exit %d: %+v %s", code, rep.Report, stderr)
	}
	for c := range 2 {
		id, _, _ := benchTarget(rep.RunID, c, 2)
		for _, s := range []string{a.URL, b.URL} {
			status, body := get(t, s+"/cart/"+id+"/state")
			if status != 200 || !strings.Contains(string(body), `"version":10`) {
				t.Errorf("%s: cart %s: %d %s, want version 10", s, id, status, body)
			}
		}
	}
}

// TestBenchRefusesBadSpreads: a negative --carts, more commands than the
// carts hold (also --total 0, no limit, with --duration), and a --url list
// with an empty item are usage errors, before anything is sent.
func TestBenchRefusesBadSpreads(t *testing.T) {
	for _, tc := range []struct {
		args []string
		flag string
	}{
		{[]string{"--carts", "-1", "--total", "10"}, "--carts"},
		{[]string{"--carts", "1", "--total", "1981"}, "--carts"},
		{[]string{"--carts", "2", "--duration", "1s", "--total", "0"}, "--carts"},
		{[]string{"--url", "http://127.0.0.1:1,,http://127.0.0.1:2", "--total", "10"}, "--url"},
		{[]string{"--url", "http://127.0.0.1:1,", "--total", "10"}, "--url"},
		{[]string{"--url", " ", "--total", "10"}, "--url"},
	} {
		var out, errOut bytes.Buffer
		code := run(context.Background(), append([]string{"bench", "--memory", "--quiet"}, tc.args...), &out, &errOut)
		if code != 2 || !strings.Contains(errOut.String(), tc.flag) {
			t.Errorf("bench %v: exit %d, %q; want a usage error naming %s", tc.args, code, errOut.String(), tc.flag)
		}
	}
}

// TestBenchTakesWhatTheCartsHold: in process, every command of a run up to
// the carts' capacity succeeds (one cart full to the last item), and a
// --carts too large to multiply by a cart's capacity is no limit at all.
func TestBenchTakesWhatTheCartsHold(t *testing.T) {
	for _, args := range [][]string{
		{"--carts", "1", "--total", "1980"},
		{"--carts", "4658726710318059", "--total", "10"},
		{"--carts", strconv.Itoa(math.MaxInt), "--total", "10"},
	} {
		code, rep, stderr := runBench(t, append([]string{"--in-process", "--memory", "--concurrency", "4"}, args...)...)
		if want, _ := strconv.Atoi(args[3]); code != 0 || rep.Succeeded != want {
			t.Errorf("bench %v: exit %d, %+v %s", args, code, rep.Report, stderr)
		}
	}
}

// TestBenchAgainstADownServer: every request fails with a transport cause,
// the throughput is zero and the exit code is not 0.
func TestBenchAgainstADownServer(t *testing.T) {
	url := downURL(t)
	code, rep, _ := runBench(t, "--url", url, "--concurrency", "2", "--total", "20")
	if code == 0 {
		t.Fatal("bench against a down server exited 0")
	}
	if rep.Succeeded != 0 || rep.OpsPerSec != 0 || rep.Failed != 20 || rep.FailuresByCause["transport: connection refused"] != 20 {
		t.Fatalf("report %+v", rep.Report)
	}
	if _, filed := rep.FailuresByCause["InternalServerError"]; filed {
		t.Fatal("transport failures filed as InternalServerError")
	}
	// --allow-failures reports the same and exits 0.
	if code, _, _ := runBench(t, "--url", url, "--total", "2", "--allow-failures"); code != 0 {
		t.Fatalf("--allow-failures exit %d", code)
	}
}

// TestBenchRefusesADataDirInUse: an in-process run does not open the
// database a running serve holds; by default it uses a temporary one.
func TestBenchRefusesADataDirInUse(t *testing.T) {
	dir := t.TempDir()
	startTestServer(t, dir)
	var out, errOut bytes.Buffer
	code := run(context.Background(), []string{"bench", "--in-process", "--data-dir", dir, "--total", "10", "--quiet"}, &out, &errOut)
	if code == 0 || !strings.Contains(errOut.String(), "in use by another factum process") {
		t.Fatalf("bench on a held data dir: %d %q", code, errOut.String())
	}
	code, rep, stderr := runBench(t, "--in-process", "--total", "20")
	if code != 0 || rep.Succeeded != 20 || !strings.Contains(rep.Target, "factum-bench-") {
		t.Fatalf("default in-process run: %d %+v %s", code, rep, stderr)
	}
}

// TestBenchHonoursFactumURL: without --url, FACTUM_URL is the target.
func TestBenchHonoursFactumURL(t *testing.T) {
	s := startTestServer(t, t.TempDir())
	t.Setenv("FACTUM_URL", s.URL)
	code, rep, stderr := runBench(t, "--total", "10")
	if code != 0 || rep.Target != s.URL || rep.Succeeded != 10 {
		t.Fatalf("bench with FACTUM_URL: %d %+v %s", code, rep, stderr)
	}
	if rep.ServerReported != 10 || rep.ServerLatencyMs == nil || rep.ServerLatencyMs.Max <= 0 {
		t.Fatalf("server latency not reported: %+v", rep.Report)
	}
}

func TestServerTiming(t *testing.T) {
	for h, want := range map[string]float64{"app;dur=1.5": 1.5, "db;dur=3, app;desc=x;dur=0.25": 0.25, "": 0, "app;dur=x": 0} {
		if got := serverTiming(h).Seconds() * 1000; got != want {
			t.Errorf("serverTiming(%q) = %vms, want %v", h, got, want)
		}
	}
}

func mustStage(t *testing.T, s string) factum.CommandStage {
	t.Helper()
	st, err := factum.ParseCommandStage(s)
	if err != nil {
		t.Fatal(err)
	}
	return st
}
