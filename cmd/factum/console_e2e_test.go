package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/factum-go/factum/internal/servicetest"
)

// screenshotsEnv, set to 1, makes TestConsoleInBrowser write a screenshot
// of each page into docs/console/ (on the SQLite run).
const screenshotsEnv = "FACTUM_CONSOLE_SCREENSHOTS"

// chromiumPath finds Debian's chromium: absent, the test is skipped with
// its name, or fails under CI=true, which must run it.
func chromiumPath(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("CI") == "true" {
		t.Fatal("chromium is not installed; CI must run the console's browser tests (apt-get install -y chromium)")
	}
	t.Skip("chromium is not installed (apt-get install -y chromium); the console's browser tests need it")
	return ""
}

// browser is a headless Chromium tab that records every JavaScript error.
type browser struct {
	t   *testing.T
	ctx context.Context
	mu  sync.Mutex
	js  []string // exceptions, console.error calls and non-network log errors
}

func newBrowser(t *testing.T) *browser {
	t.Helper()
	path := chromiumPath(t)
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(),
		chromedp.ExecPath(path),
		chromedp.Flag("headless", true),
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck,
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1280, 900),
	)
	ctx, cancel := chromedp.NewContext(actx)
	t.Cleanup(func() { cancel(); cancelAlloc() })
	b := &browser{t: t, ctx: ctx}
	// Console subscribes at once (starting the browser, with no timeout
	// on its context, as chromedp asks): no message is lost.
	messages := chromedp.Console(ctx)
	go func() {
		for m, err := range messages {
			if err != nil {
				return
			}
			// A failed request (a 404 for a missing snapshot) is the API's
			// answer, not a script error; every other error (an exception,
			// console.error, a CSP violation) is.
			if (m.Type == chromedp.ConsoleError || m.IsException()) && m.Source != "network" {
				b.mu.Lock()
				b.js = append(b.js, fmt.Sprintf("%s (%s %s:%d)", m, m.Source, m.URL, m.Line))
				b.mu.Unlock()
			}
		}
	}()
	return b
}

// run runs actions within 30 s, failing the test with step's name.
func (b *browser) run(step string, actions ...chromedp.Action[chromedp.Void]) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 30*time.Second)
	defer cancel()
	if err := chromedp.Do(ctx, actions...); err != nil {
		b.fail(step, err)
	}
}

// value runs one action that answers a value within 30 s.
func value[T any](b *browser, step string, a chromedp.Action[T]) T {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 30*time.Second)
	defer cancel()
	v, err := chromedp.Run(ctx, a)
	if err != nil {
		b.fail(step, err)
	}
	return v
}

func (b *browser) fail(step string, err error) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 5*time.Second)
	defer cancel()
	html, _ := chromedp.Run(ctx, chromedp.OuterHTML(chromedp.CSS("main")))
	b.t.Fatalf("%s: %v\npage: %.3000s\njs errors: %v", step, err, html, b.errors())
}

func (b *browser) errors() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]string(nil), b.js...)
}

// until waits for a JavaScript expression to be true.
func until(expr string) chromedp.Action[chromedp.Void] {
	poll := chromedp.Poll[bool](expr, chromedp.WithPollingInterval(50*time.Millisecond))
	return func(ctx context.Context, t *chromedp.Target) (chromedp.Void, error) {
		_, err := poll(ctx, t)
		return chromedp.Void{}, err
	}
}

// text reads the text of the first element sel matches.
func (b *browser) text(sel string) string {
	b.t.Helper()
	return value(b, "read "+sel, chromedp.TextContent(chromedp.CSS(sel)))
}

// shot writes a screenshot of the viewport as docs/console/<name>.png
// when screenshots are asked for.
func (b *browser) shot(enabled bool, name string) {
	b.t.Helper()
	b.shotOf(enabled, name, chromedp.CaptureScreenshot())
}

// shotFull is shot of the whole page, beyond the viewport.
func (b *browser) shotFull(enabled bool, name string) {
	b.t.Helper()
	b.shotOf(enabled, name, chromedp.FullScreenshot(100))
}

func (b *browser) shotOf(enabled bool, name string, capture chromedp.Action[[]byte]) {
	b.t.Helper()
	if !enabled {
		return
	}
	b.run("settle", chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		_, err := chromedp.Evaluate[bool](`document.getElementById('toast').hidden = true`)(ctx, t)
		return err
	}), sleep(150*time.Millisecond))
	png := value(b, "screenshot "+name, capture)
	dir := filepath.Join("..", "..", "docs", "console")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		b.t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, name+".png"), png, 0o644); err != nil {
		b.t.Fatal(err)
	}
}

// findForm opens the console's page (aggregates, requests) at base and
// submits its find form for the aggregate type typ with the field
// (#find-id or #find-request) set to value.
func findForm(base, page, typ, field, value string) chromedp.Action[chromedp.Void] {
	return chromedp.Steps(
		chromedp.Navigate(base+"/console/#/"+page),
		until(`document.body.dataset.ready === '`+page+`' && !!document.getElementById('find-type')`),
		chromedp.SetValue(chromedp.CSS(`#find-type`), typ),
		chromedp.SetValue(chromedp.CSS(field), value),
		chromedp.Click(chromedp.CSS(`#find-form button[type=submit]`)),
	)
}

// confirmDialog clicks the confirmation dialog's Confirm button.
func confirmDialog() chromedp.Action[chromedp.Void] {
	return chromedp.Steps(
		until(`document.getElementById('confirm').open`),
		chromedp.Click(chromedp.CSS("#confirm-ok")),
		until(`!document.getElementById('confirm').open`),
	)
}

// sleep waits d (or until ctx ends).
func sleep(d time.Duration) chromedp.Action[chromedp.Void] {
	return func(ctx context.Context, _ *chromedp.Target) (chromedp.Void, error) {
		select {
		case <-time.After(d):
			return chromedp.Void{}, nil
		case <-ctx.Done():
			return chromedp.Void{}, ctx.Err()
		}
	}
}

// The console in a real browser, on the example service: the overview;
// a failure caused through the API seen in Failures, opened and forced
// to retry until it succeeds; an aggregate found, stepped through and its
// snapshot regenerated; a request found by its request ID alone; a
// snapshot query run from the form; and not one JavaScript error.
func TestConsoleInBrowser(t *testing.T) {
	tests := []struct {
		name  string
		store func(t *testing.T) storeOptions
		shots bool
	}{
		{"sqlite", func(t *testing.T) storeOptions { return storeOptions{DataDir: t.TempDir()} }, os.Getenv(screenshotsEnv) == "1"},
		{"postgres", func(t *testing.T) storeOptions {
			return storeOptions{PostgresURL: servicetest.PostgresSchemaURL(t)}
		}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := newBrowser(t)
			opts := tt.store(t)
			var log strings.Builder
			s := startForTest(t, serveOptions{
				Addr: "127.0.0.1:0", storeOptions: opts,
				observeOptions: observeOptions{LogLevel: "info", LogFormat: "text", Metrics: true},
			}, &log)
			consoleScenario(t, b, s, tt.shots)
		})
	}
}

func consoleScenario(t *testing.T, b *browser, s *server, shots bool) {
	for i, sku := range []string{"sku-1", "sku-2", "sku-1"} {
		if code, body := post(t, s.URL+"/cart/c-1/add_item", fmt.Sprintf(`{"sku":%q,"qty":%d}`, sku, i+1), "Command-Wait-Stage", "SNAPSHOT"); code != http.StatusOK {
			t.Fatalf("add item: %d %s", code, body)
		}
	}
	if code, body := post(t, s.URL+"/user/register_user", `{"username":"bob","email":"bob@shop.example"}`, "Command-Request-Id", "req-bob", "Command-Wait-Stage", "SNAPSHOT"); code != http.StatusOK {
		t.Fatalf("register bob: %d %s", code, body)
	}

	// A command that waits for PROCESSED (the default stage).
	if code, body := post(t, s.URL+"/cart/c-2/add_item", `{"sku":"sku-3","qty":1}`); code != http.StatusOK {
		t.Fatalf("add item to c-2: %d %s", code, body)
	}

	// Overview: / redirects to the console, which counts the aggregates.
	b.run("open the overview", chromedp.Navigate(s.URL+"/"),
		until(`document.body.dataset.ready === 'overview'`),
		chromedp.WaitVisible(chromedp.CSS(`[data-test=count-cart]`)))
	if got := b.text(`[data-test=count-cart] td.num`); got != "2" {
		t.Fatalf("overview counts %q carts, want 2", got)
	}
	if got := b.text(`[data-test=backlog-failed] td.num`); got != "0" {
		t.Fatalf("overview backlog shows %q failed, want 0", got)
	}
	overviewMetrics(t, b, s)
	overviewWindow(t, b, s)
	b.shotFull(shots, "overview")
	promSelfTest(t, b)

	// A failure through the API: a greylisting domain defers the welcome
	// mail past the in-place attempts, so compensation records it.
	if code, body := post(t, s.URL+"/user/register_user", `{"username":"ann","email":"ann@greylist.example"}`, "Command-Request-Id", "req-ann", "Command-Wait-Stage", "SNAPSHOT"); code != http.StatusOK {
		t.Fatalf("register ann: %d %s", code, body)
	}
	waitForExecution(t, s.URL)

	b.run("see it in Failures", chromedp.Navigate(s.URL+"/console/#/failures?status=FAILED"),
		until(`document.body.dataset.ready === 'failures' && document.querySelectorAll('tr[data-test=execution][data-status=FAILED]').length === 1`))
	b.shot(shots, "failures")
	b.run("open it", chromedp.Click(chromedp.CSS(`tr[data-test=execution] a`)),
		until(`document.body.dataset.ready === 'failures' && !!document.querySelector('[data-test=error-code]')`))
	if got := b.text(`[data-test=error-code]`); got != "TooManyRequests" {
		t.Fatalf("detail shows error %q, want TooManyRequests", got)
	}
	if got := b.text(`[data-test=stack]`); !strings.Contains(got, "greylisted") {
		t.Fatalf("detail's error details %q do not say why", got)
	}
	b.shot(shots, "failure")
	b.run("change the retry spec", chromedp.Click(chromedp.CSS(`[data-test=change-spec]`)),
		until(`document.getElementById('confirm').open`),
		chromedp.SetValue(chromedp.CSS(`#spec-max`), "4"), confirmDialog(),
		until(`(document.querySelector('[data-test=max-retries]')||{}).textContent === '4'`))
	b.run("force a retry", chromedp.Click(chromedp.CSS(`[data-test=force-retry]`)), confirmDialog(),
		until(`(document.querySelector('[data-test=status]')||{}).textContent === 'SUCCEEDED'`))
	if got := b.text(`#toast`); !strings.Contains(got, "SUCCEEDED") {
		t.Fatalf("toast after the retry: %q", got)
	}
	if got := b.text(`ol.history`); !strings.Contains(got, "by console") || !strings.Contains(got, "execution_success_applied") {
		t.Fatalf("the lifecycle does not show the operator's retry: %q", got)
	}
	// An aggregate found by ID, stepped through, its snapshot regenerated.
	b.run("find the cart", findForm(s.URL, "aggregates", "cart", "#find-id", "c-1"),
		until(`(document.getElementById('state-at')||{dataset:{}}).dataset.version === '3'`))
	if n := countOf(t, b, `tr[data-test=stream]`); n != 3 {
		t.Fatalf("the stream shows %d versions, want 3", n)
	}
	if got := b.text(`#state-at pre`); !strings.Contains(got, `"sku-1": 4`) {
		t.Fatalf("state at 3: %q", got)
	}
	b.shot(shots, "aggregate")
	b.run("step back", chromedp.Click(chromedp.CSS(`[data-test=prev-version]`)),
		until(`document.getElementById('state-at').dataset.version === '2'`))
	if got := b.text(`#state-at pre`); !strings.Contains(got, `"sku-1": 1`) || !strings.Contains(got, `"sku-2": 2`) {
		t.Fatalf("state at 2: %q", got)
	}
	b.run("step back again", chromedp.Click(chromedp.CSS(`[data-test=prev-version]`)),
		until(`document.getElementById('state-at').dataset.version === '1'`))
	if got := b.text(`#state-at pre`); strings.Contains(got, "sku-2") {
		t.Fatalf("state at 1 holds a later item: %q", got)
	}
	b.run("step forward", chromedp.Click(chromedp.CSS(`[data-test=next-version]`)),
		until(`document.getElementById('state-at').dataset.version === '2'`))
	b.run("read the snapshot", until(`!!document.querySelector('[data-test=snapshot-version]')`))
	b.run("regenerate the snapshot", sleep(5*time.Millisecond), chromedp.Click(chromedp.CSS(`[data-test=regenerate]`)), confirmDialog(),
		until(`(document.getElementById('toast').textContent||'').includes('regenerated at version 3')`))
	if got := b.text(`[data-test=snapshot-version]`); got != "3" {
		t.Fatalf("regenerated snapshot at version %q, want 3", got)
	}

	// A user created without an ID, found by its request ID alone.
	b.run("find by request ID", findForm(s.URL, "aggregates", "user", "#find-request", "req-ann"),
		until(`(document.getElementById('state-at')||{dataset:{}}).dataset.version === '1'`))
	if got := b.text(`#state-at pre`); !strings.Contains(got, "ann@greylist.example") {
		t.Fatalf("found by request ID: %q", got)
	}

	// Requests: the outcome of a request.
	b.run("look a request up", findForm(s.URL, "requests", "user", "#find-request", "req-bob"),
		until(`!!document.querySelector('[data-test=outcome]')`))
	if got := b.attr(`[data-test=outcome]`, "data-outcome"); got != "Ok" {
		t.Fatalf("outcome of req-bob: %q", got)
	}
	b.shot(shots, "requests")

	// Snapshot query from the form.
	b.run("run a snapshot query", chromedp.Navigate(s.URL+"/console/#/query"),
		until(`document.body.dataset.ready === 'query' && !!document.querySelector('.cond-field')`),
		chromedp.SetValue(chromedp.CSS(`#query-type`), "user"),
		chromedp.SendKeys(chromedp.CSS(`.cond-field`), "state.email"),
		chromedp.SetValue(chromedp.CSS(`.cond-op`), "ENDS_WITH"),
		chromedp.SendKeys(chromedp.CSS(`.cond-value`), "greylist.example"),
		chromedp.Click(chromedp.CSS(`#run-query`)),
		until(`!!document.querySelector('[data-test=query-total]')`))
	if got := b.text(`[data-test=query-total]`); got != "1 match" {
		t.Fatalf("query answered %q, want 1 match", got)
	}
	var q struct {
		Condition struct{ Field, Operator, Value string } `json:"condition"`
	}
	if err := json.Unmarshal([]byte(b.text(`#query-json`)), &q); err != nil || q.Condition.Field != "state.email" || q.Condition.Operator != "ENDS_WITH" || q.Condition.Value != "greylist.example" {
		t.Fatalf("the query's JSON form: %+v, %v", q, err)
	}
	if got := b.text(`tr[data-test=query-row]`); !strings.Contains(got, "ann") {
		t.Fatalf("query row: %q", got)
	}
	b.shot(shots, "query")
	b.run("page through a query", chromedp.SetValue(chromedp.CSS(`.cond-value`), "example"),
		chromedp.SetValue(chromedp.CSS(`#query-size`), "1"),
		chromedp.SetValue(chromedp.CSS(`#query-sort`), "state.username"),
		chromedp.Click(chromedp.CSS(`#run-query`)),
		until(`(document.querySelector('[data-test=query-total]')||{}).textContent === '2 match'`))
	first := b.text(`tr[data-test=query-row]`)
	b.run("next page", chromedp.Click(chromedp.CSS(`#query-results [data-test=next-page]`)),
		until(`((document.querySelector('#query-results .pager span')||{}).textContent||'').includes('page 2 of 2')`))
	if second := b.text(`tr[data-test=query-row]`); !strings.Contains(first, "ann") || !strings.Contains(second, "bob") {
		t.Fatalf("pages sorted by username: %q then %q, want ann then bob", first, second)
	}

	// A mail that can never be delivered: the operator marks it
	// unrecoverable and points its retries at another function.
	if code, body := post(t, s.URL+"/user/register_user", `{"username":"cyd","email":"cyd@mail.invalid"}`, "Command-Wait-Stage", "SNAPSHOT"); code != http.StatusOK {
		t.Fatalf("register cyd: %d %s", code, body)
	}
	waitForExecution(t, s.URL)
	b.run("open the undeliverable mail", chromedp.Navigate(s.URL+"/console/#/failures?status=FAILED&code=IllegalArgument&since=2000-01-01T00:00"),
		until(`document.body.dataset.ready === 'failures' && document.querySelectorAll('tr[data-test=execution]').length === 1`),
		chromedp.Click(chromedp.CSS(`tr[data-test=execution] a`)),
		until(`(document.querySelector('[data-test=error-code]')||{}).textContent === 'IllegalArgument'`))
	b.run("mark it unrecoverable", chromedp.Click(chromedp.CSS(`[data-test=mark-recoverable]`)),
		until(`document.getElementById('confirm').open`),
		chromedp.SetValue(chromedp.CSS(`#recoverable-choice`), "UNRECOVERABLE"), confirmDialog(),
		until(`(document.querySelector('[data-test=recoverable]')||{}).textContent === 'UNRECOVERABLE'`))
	b.run("change its function", chromedp.Click(chromedp.CSS(`[data-test=change-function]`)),
		until(`document.getElementById('confirm').open`),
		chromedp.SetValue(chromedp.CSS(`#fn-name`), "on_user_registered_v2"), confirmDialog(),
		until(`(document.querySelector('[data-test=function]')||{}).textContent === 'shop.notifications.on_user_registered_v2'`))

	b.run("back to the overview", chromedp.Navigate(s.URL+"/console/#/overview"),
		until(`document.body.dataset.ready === 'overview'`),
		chromedp.WaitVisible(chromedp.CSS(`[data-test=backlog-succeeded]`)))
	if got := b.text(`[data-test=backlog-succeeded] td.num`); got != "1" {
		t.Fatalf("overview backlog shows %q succeeded, want 1", got)
	}
	if errs := b.errors(); len(errs) > 0 {
		t.Fatalf("JavaScript errors in the console log:\n%s", strings.Join(errs, "\n"))
	}
}

// overviewMetrics checks the overview's metrics panel after the commands
// above: the commands the cart processed (4), a PROCESSED latency row
// with a p50 (the first scrape's window runs from the service's start),
// and one lag row per consumer group, each reaching 0 as the page polls.
func overviewMetrics(t *testing.T, b *browser, s *server) {
	t.Helper()
	b.run("see the metrics", until(`!!document.querySelector('[data-test=metrics] [data-test=commands-total]')`))
	if got := b.attr(`tr[data-test="aggregate-shop.cart"]`, "data-total"); got != "4" {
		t.Fatalf("the overview counts %q cart commands processed, want 4", got)
	}
	if got := b.text(`[data-test=commands-total]`); got == "" || got == "0" {
		t.Fatalf("the overview shows %q commands processed", got)
	}
	// A figure of commands/s: an average since the start at the first
	// scrape (it is > 0 then), the window's rate after.
	if got := b.attr(`[data-test=commands-rate]`, "data-value"); got == "" {
		t.Fatal("the overview shows no commands/s figure")
	} else if window := b.text(`[data-test=metrics-window]`); strings.HasPrefix(window, "since") && (got == "0" || strings.HasPrefix(got, "-")) {
		t.Fatalf("the overview shows %s commands/s since the start, after 5 commands", got)
	}
	if got := b.attr(`tr[data-test=stage-PROCESSED]`, "data-total"); got != "1" {
		t.Fatalf("the PROCESSED latency row counts %q commands, want 1", got)
	}
	// One read of the row and the window (the page may scrape again
	// meanwhile: an idle window has no p50, so only the first is checked).
	row := value(b, "read the PROCESSED row", chromedp.Evaluate[[]string](`(() => {
		const r = document.querySelector('tr[data-test=stage-PROCESSED]');
		return [document.querySelector('[data-test=metrics-window]').textContent, r.dataset.p50, r.querySelector('td.p50').textContent];
	})()`))
	if strings.HasPrefix(row[0], "since") && (row[1] == "" || row[2] == "—") {
		t.Fatalf("the PROCESSED latency row since the start has no p50: %q", row)
	}
	procs := s.rt.Functions().Processors()
	if len(procs) == 0 {
		t.Fatal("the example service has no consumer groups to show")
	}
	if n := countOf(t, b, `[data-test=metrics] tr[data-test^=lag-]`); n != len(procs) {
		t.Fatalf("the overview shows %d lag rows, want one per consumer group (%d)", n, len(procs))
	}
	for _, p := range procs {
		row := fmt.Sprintf(`tr[data-test="lag-%s/%s"]`, p.Name().Context, p.Name().Processor)
		// The page scrapes every few seconds: the row reaches 0 streams and
		// "caught up".
		b.run("lag of "+row+" reaches 0", until(fmt.Sprintf(
			`(() => { const r = document.querySelector(%q); return !!r && r.dataset.streams === '0' && r.dataset.seconds === '0'; })()`, row)))
	}
	if got := b.text(`[data-test=raw-metrics] summary`); got != "raw metrics" {
		t.Fatalf("raw metrics details: %q", got)
	}
}

// overviewWindow sends commands while the overview polls: the next
// scrape's window counts them, from the counters' deltas, as commands/s
// above 0 and PROCESSED latencies.
func overviewWindow(t *testing.T, b *browser, s *server) {
	t.Helper()
	const n = 6
	for i := range n {
		if code, body := post(t, s.URL+"/cart/c-3/add_item", fmt.Sprintf(`{"sku":"sku-%d","qty":1}`, i)); code != http.StatusOK {
			t.Fatalf("add item to c-3: %d %s", code, body)
		}
	}
	b.run("the window counts them", until(fmt.Sprintf(`(() => {
		const w = document.querySelector('[data-test=metrics-window]');
		const r = document.querySelector('tr[data-test=stage-PROCESSED]');
		return !!w && w.textContent.startsWith('last ') && !!r && Number(r.dataset.window) >= %d;
	})()`, n)))
	if got := b.attr(`[data-test=commands-rate]`, "data-value"); got == "" || got == "0" {
		t.Fatalf("commands/s over a window of %d commands: %q", n, got)
	}
	if got := b.attr(`tr[data-test="aggregate-shop.cart"]`, "data-window"); got != fmt.Sprint(n) {
		t.Fatalf("the window counts %s cart commands, want %d", got, n)
	}
	if got := b.attr(`tr[data-test=stage-PROCESSED]`, "data-p95"); got == "" {
		t.Fatal("the PROCESSED row of the window has no p95")
	}
	if got := b.attr(`tr[data-test=stage-PROCESSED]`, "data-total"); got != fmt.Sprint(n+1) {
		t.Fatalf("the PROCESSED row counts %s since the start, want %d", got, n+1)
	}
}

// promSelfTest runs the console's Prometheus parser self-test
// (testdata/prom_selftest.js) in the console's page.
func promSelfTest(t *testing.T, b *browser) {
	t.Helper()
	src, err := os.ReadFile(filepath.Join("testdata", "prom_selftest.js"))
	if err != nil {
		t.Fatal(err)
	}
	out := value(b, "the parser's self-test", chromedp.Evaluate[string](string(src), chromedp.EvalAwaitPromise))
	var fails []string
	if err := json.Unmarshal([]byte(out), &fails); err != nil {
		t.Fatalf("self-test answered %q: %v", out, err)
	}
	if len(fails) > 0 {
		t.Fatalf("the parser's self-test failed:\n%s", strings.Join(fails, "\n"))
	}
}

func (b *browser) attr(sel, name string) string {
	b.t.Helper()
	return value(b, "read "+sel+"@"+name, chromedp.AttributeValue(chromedp.CSS(sel), name)).Value
}

func countOf(t *testing.T, b *browser, sel string) int {
	t.Helper()
	return value(b, "count "+sel, chromedp.Evaluate[int](fmt.Sprintf("document.querySelectorAll(%q).length", sel)))
}

// waitForExecution waits until compensation has recorded one failed
// execution.
func waitForExecution(t *testing.T, base string) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for time.Now().Before(deadline) {
		code, body := get(t, base+"/compensation/counts")
		if code == http.StatusOK && strings.Contains(string(body), `"failed":1`) {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatal("no execution was recorded for the greylisted welcome mail")
}
