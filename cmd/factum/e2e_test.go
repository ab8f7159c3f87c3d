package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/command"
	"github.com/factum-go/factum/httpapi"
)

// startTestServer runs the example service on a random port over a temp
// data directory and stops it at cleanup.
func startTestServer(t *testing.T, dataDir string) *server {
	t.Helper()
	s, log := startStoreServer(t, storeOptions{DataDir: dataDir})
	if !strings.Contains(log, "listening on "+s.URL) || !strings.Contains(log, "data ") {
		t.Fatalf("start-up message %q does not say where it listens and where the data is", log)
	}
	return s
}

// startStoreServer runs the example service on a random port over store,
// stopped at cleanup unless the test stopped it; it answers the start-up
// message too.
func startStoreServer(t *testing.T, store storeOptions) (*server, string) {
	t.Helper()
	var log bytes.Buffer
	s := startForTest(t, serveOptions{Addr: "127.0.0.1:0", storeOptions: store}, &log)
	return s, log.String()
}

// startForTest starts the service with opts, writing its log to log, and
// stops it at cleanup unless the test stopped it. A service that does
// not start fails the test, with what it logged.
func startForTest(t *testing.T, opts serveOptions, log interface {
	io.Writer
	String() string
}) *server {
	t.Helper()
	s, err := startServer(context.Background(), opts, log)
	if err != nil {
		t.Fatalf("start: %v (log %s)", err, log.String())
	}
	t.Cleanup(func() {
		if !s.stopped.Load() {
			stopServer(t, s)
		}
	})
	return s
}

func stopServer(t *testing.T, s *server) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := s.Shutdown(ctx); err != nil {
		t.Fatalf("shutdown: %v", err)
	}
}

func post(t *testing.T, url, body string, headers ...string) (int, []byte) {
	t.Helper()
	req, err := http.NewRequest("POST", url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	return doReq(t, req)
}

func get(t *testing.T, url string) (int, []byte) {
	t.Helper()
	req, err := http.NewRequest("GET", url, nil)
	if err != nil {
		t.Fatal(err)
	}
	return doReq(t, req)
}

func doReq(t *testing.T, req *http.Request) (int, []byte) {
	t.Helper()
	status, _, b := send(t, http.DefaultClient, req)
	return status, b
}

// send sends req through client and reads the whole answer.
func send(t *testing.T, client *http.Client, req *http.Request) (int, http.Header, []byte) {
	t.Helper()
	res, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return res.StatusCode, res.Header, b
}

func TestServeTour(t *testing.T) {
	s := startTestServer(t, t.TempDir())
	u := s.URL

	// Create a cart by adding an item.
	status, b := post(t, u+"/cart/cart-1/add_item", `{"sku":"sku-1","qty":2}`, httpapi.HeaderRequestID, "req-1")
	var first command.Result
	if status != 200 || json.Unmarshal(b, &first) != nil || first.AggregateVersion != 1 {
		t.Fatalf("create: %d %s", status, b)
	}
	// Add another item.
	status, b = post(t, u+"/cart/cart-1/add_item", `{"sku":"sku-2","qty":1}`, httpapi.HeaderRequestID, "req-2")
	if status != 200 {
		t.Fatalf("add: %d %s", status, b)
	}
	// Retry the first request: same outcome, no new stream.
	status, b = post(t, u+"/cart/cart-1/add_item", `{"sku":"sku-1","qty":2}`, httpapi.HeaderRequestID, "req-1")
	var retry command.Result
	if status != 200 || json.Unmarshal(b, &retry) != nil || !retry.Duplicate || retry.AggregateVersion != 1 {
		t.Fatalf("retry: %d %s", status, b)
	}
	// A stale version.
	status, b = post(t, u+"/cart/cart-1/add_item", `{"sku":"sku-3","qty":1}`, httpapi.HeaderAggregateVersion, "1")
	var e httpapi.ErrorBody
	if status != 409 || json.Unmarshal(b, &e) != nil || e.Code != factum.CodeCommandExpectVersionConflict {
		t.Fatalf("stale: %d %s", status, b)
	}
	// Look up a request.
	status, b = get(t, u+"/cart/cart-1/request/req-2")
	var found command.Result
	if status != 200 || json.Unmarshal(b, &found) != nil || found.AggregateVersion != 2 {
		t.Fatalf("lookup: %d %s", status, b)
	}
	status, _ = get(t, u+"/cart/cart-1/request/req-9")
	if status != 404 {
		t.Fatalf("lookup of an unknown request: %d", status)
	}
	// The state.
	status, b = get(t, u+"/cart/cart-1/state")
	if status != 200 || !bytes.Contains(b, []byte(`"items":{"sku-1":2,"sku-2":1}`)) {
		t.Fatalf("state: %d %s", status, b)
	}
	// Wait for SNAPSHOT, then query the snapshots.
	status, b = post(t, u+"/cart/cart-1/add_item", `{"sku":"sku-3","qty":1}`, httpapi.HeaderWaitStage, "SNAPSHOT")
	if status != 200 || !bytes.Contains(b, []byte(`"stage":"SNAPSHOT"`)) {
		t.Fatalf("wait for SNAPSHOT: %d %s", status, b)
	}
	status, b = post(t, u+"/cart/snapshot/list/state", `{"condition":{"operator":"AGGREGATE_ID","value":"cart-1"}}`)
	if status != 200 || !bytes.Contains(b, []byte(`"sku-3":1`)) {
		t.Fatalf("snapshot query: %d %s", status, b)
	}
	status, b = post(t, u+"/cart/snapshot/list", `{"condition":{"operator":"BOGUS"}}`)
	if status != 400 {
		t.Fatalf("malformed query: %d %s", status, b)
	}
	status, _ = get(t, u+"/readyz")
	if status != 200 {
		t.Fatalf("readyz: %d", status)
	}
}

// The CLI's client commands against a running server.
func TestClientCommands(t *testing.T) {
	s := startTestServer(t, t.TempDir())
	var out, errOut bytes.Buffer
	cli := func(args ...string) int {
		out.Reset()
		errOut.Reset()
		return run(context.Background(), append(args, "--url", s.URL, "--json"), &out, &errOut)
	}
	if code := cli("send", "cart", "cart-1", "add_item", `{"sku":"sku-1","qty":1}`, "--request-id", "r1"); code != 0 || !strings.Contains(out.String(), `"aggregateVersion": 1`) {
		t.Fatalf("send: %d %s %s", code, out.String(), errOut.String())
	}
	if code := cli("send", "cart", "cart-1", "add_item", `{"sku":"sku-1","qty":1}`, "--version", "5"); code != 1 || !strings.Contains(errOut.String(), "409 CommandExpectVersionConflict") {
		t.Fatalf("stale send: %d %s", code, errOut.String())
	}
	if code := cli("send", "cart", "cart-1", "add_item", `{"sku":"sku-2","qty":1}`, "--stream", "--wait", "SNAPSHOT"); code != 0 || !strings.Contains(out.String(), "event: SENT") || !strings.Contains(out.String(), "event: SNAPSHOT") {
		t.Fatalf("stream: %d %s %s", code, out.String(), errOut.String())
	}
	if code := cli("events", "cart", "cart-1"); code != 0 || strings.Count(out.String(), `"version":`) != 2 {
		t.Fatalf("events: %d %s", code, out.String())
	}
	if code := cli("query", "cart", "count"); code != 0 || strings.TrimSpace(out.String()) != "1" {
		t.Fatalf("query: %d %q %s", code, out.String(), errOut.String())
	}
	if code := cli("lookup", "cart", "cart-1", "r1"); code != 0 || !strings.Contains(out.String(), `"requestId": "r1"`) {
		t.Fatalf("lookup: %d %s", code, out.String())
	}
	if code := cli("lookup", "cart", "cart-1", "nope"); code != 1 || !strings.Contains(errOut.String(), "404 NotFound") {
		t.Fatalf("lookup of an unknown request: %d %s", code, errOut.String())
	}
	if code := cli("send", "cart", "cart-1", "add_item", `{"sku":"sku-1","qty":1}`, "--tenant", "acme"); code != 1 || !strings.Contains(errOut.String(), "404 NotFound") {
		t.Fatalf("wrong tenant: %d %s", code, errOut.String())
	}
}

// Restarting on the same data directory keeps the state.
func TestServeRestartKeepsState(t *testing.T) {
	dir := t.TempDir()
	s := startTestServer(t, dir)
	if status, b := post(t, s.URL+"/cart/cart-1/add_item", `{"sku":"sku-1","qty":3}`, httpapi.HeaderRequestID, "req-1", httpapi.HeaderWaitStage, "SNAPSHOT"); status != 200 {
		t.Fatalf("add: %d %s", status, b)
	}
	stopServer(t, s)

	s = startTestServer(t, dir)
	// The snapshot is durable: it is there at once, not rebuilt.
	if status, b := get(t, s.URL+"/cart/cart-1/snapshot"); status != 200 || !bytes.Contains(b, []byte(`"sku-1":3`)) {
		t.Fatalf("snapshot after restart: %d %s", status, b)
	}
	status, b := get(t, s.URL+"/cart/cart-1/state")
	if status != 200 || !bytes.Contains(b, []byte(`"items":{"sku-1":3}`)) {
		t.Fatalf("state after restart: %d %s", status, b)
	}
	// The retried request still finds its first attempt.
	status, b = post(t, s.URL+"/cart/cart-1/add_item", `{"sku":"sku-1","qty":3}`, httpapi.HeaderRequestID, "req-1")
	var res command.Result
	if status != 200 || json.Unmarshal(b, &res) != nil || !res.Duplicate || res.AggregateVersion != 1 {
		t.Fatalf("retry after restart: %d %s", status, b)
	}
	// And waits for SNAPSHOT complete: the snapshotter caught up on the log.
	status, b = post(t, s.URL+"/cart/cart-1/add_item", `{"sku":"sku-2","qty":1}`, httpapi.HeaderWaitStage, "SNAPSHOT")
	if status != 200 || !bytes.Contains(b, []byte(`"stage":"SNAPSHOT"`)) {
		t.Fatalf("wait for SNAPSHOT: %d %s", status, b)
	}
}

func TestBenchJSON(t *testing.T) {
	for _, target := range []string{"in-process", "http"} {
		t.Run(target, func(t *testing.T) {
			file := filepath.Join(t.TempDir(), "bench.json")
			args := []string{"bench", "--concurrency", "4", "--total", "200", "--out", file}
			if target == "http" {
				args = append(args, "--url", startTestServer(t, t.TempDir()).URL)
			} else {
				args = append(args, "--data-dir", t.TempDir())
			}
			var out, errOut bytes.Buffer
			if code := run(context.Background(), args, &out, &errOut); code != 0 {
				t.Fatalf("bench: %d %s %s", code, out.String(), errOut.String())
			}
			if !strings.Contains(out.String(), "throughput") || !strings.Contains(errOut.String(), "200/200") {
				t.Fatalf("output %q, progress %q", out.String(), errOut.String())
			}
			b, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			var rep benchReport
			if err := json.Unmarshal(b, &rep); err != nil {
				t.Fatalf("%s: %v", b, err)
			}
			if rep.Total != 200 || rep.Succeeded != 200 || rep.Stage != "PROCESSED" || rep.OpsPerSec <= 0 || rep.LatencyMs.P99 <= 0 || rep.LatencyMs.Max < rep.LatencyMs.P50 {
				t.Fatalf("report %+v", rep)
			}
		})
	}
}

// serve drains and returns nil when its context ends (SIGINT/SIGTERM).
func TestServeStopsGracefully(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() {
		done <- serve(ctx, serveOptions{Addr: "127.0.0.1:0", DrainTimeout: 5 * time.Second, storeOptions: storeOptions{Memory: true}}, pw)
		pw.Close()
	}()
	buf := make([]byte, 4096)
	n, _ := pr.Read(buf) // the first start-up line
	if !strings.Contains(string(buf[:n]), "listening on") {
		t.Fatalf("start-up: %q", buf[:n])
	}
	go io.Copy(io.Discard, pr)
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("serve: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("serve did not stop")
	}
}
