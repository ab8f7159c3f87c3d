package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/factum-go/factum/auth"
	"github.com/factum-go/factum/projection"
)

// The console's Projections and Cluster pages on the example service over
// SQLite, with credentials: an admin sees the order_summaries projection,
// rebuilds it through the console and sees the live build switch (the API
// agrees), resets and replays it, and runs its read queries in one tenant
// and another, each answering only that tenant's orders; a reader that is
// no admin sees why the builds are hidden, and its query form answers its
// own tenant's rows; the cluster page says the service runs without NATS;
// not one JavaScript error.
func TestConsoleProjections(t *testing.T) {
	b := newBrowser(t)
	shots := os.Getenv(screenshotsEnv) == "1"
	var log strings.Builder
	s := startForTest(t, serveOptions{Addr: "127.0.0.1:0", storeOptions: storeOptions{DataDir: t.TempDir()}, securityOptions: readerAndRoot}, &log)
	send := func(path, body string) {
		t.Helper()
		if code, out := post(t, s.URL+path, body, auth.HeaderAPIKey, keyRoot, "Command-Wait-Stage", "PROJECTED"); code != http.StatusOK {
			t.Fatalf("%s: %d %s", path, code, out)
		}
	}
	if code, out := post(t, s.URL+"/tenant/acme/inventory/apple/restock", `{"qty":10}`, auth.HeaderAPIKey, keyRoot); code != http.StatusOK {
		t.Fatalf("restock: %d %s", code, out)
	}
	send("/tenant/acme/order/o-acme-1/place_order", `{"sku":"apple","qty":2}`)
	send("/tenant/acme/order/o-acme-2/place_order", `{"sku":"apple","qty":1}`)
	send("/tenant/globex/order/o-globex-1/place_order", `{"sku":"apple","qty":3}`)

	// signIn applies key (principal name) and tenant in the header's
	// session form, and waits until the console has learnt both.
	signIn := func(step, name, key, tenant string) {
		t.Helper()
		b.run(step, chromedp.Navigate(s.URL+"/console/#/overview"),
			until(`document.body.dataset.ready === 'overview'`),
			js(fmt.Sprintf(`document.getElementById('credential').value = %q; document.getElementById('tenant').value = %q; document.getElementById('who').textContent = ''`, key, tenant)),
			chromedp.Click(chromedp.CSS(`#session button[type=submit]`)),
			until(fmt.Sprintf(`document.getElementById('who').textContent.startsWith(%q) && (sessionStorage.getItem('factum.tenant') || '') === %q`, name, tenant)))
	}
	nonce := 0
	// runQuery opens the read-query form with query chosen, sets the
	// parameters and runs it, answering the rows' text.
	runQuery := func(step, route, query string, params map[string]string) []string {
		t.Helper()
		nonce++ // a new hash every time, so the page renders again
		b.run(step+": open", js(`delete document.body.dataset.ready`), chromedp.Navigate(fmt.Sprintf("%s/console/#/%s?query=%s&n=%d", s.URL, route, query, nonce)),
			until(`document.body.dataset.ready === 'projections' && !!document.getElementById('read-form')`))
		if got := value(b, step+": chosen", chromedp.Evaluate[string](`document.getElementById('read-query').value`)); got != query {
			t.Fatalf("%s: the form chose %q, want %q", step, got, query)
		}
		for k, v := range params {
			b.run(step+": set "+k, chromedp.SendKeys(chromedp.CSS(fmt.Sprintf(`#read-params [data-param=%q]`, k)), v))
		}
		b.run(step+": run", chromedp.Click(chromedp.CSS(`#run-read-query`)),
			until(`!!document.querySelector('[data-test=query-count]') || !!document.querySelector('#read-results .error')`))
		if n := countOf(t, b, `#read-results .error`); n != 0 {
			t.Fatalf("%s: the query failed: %s", step, b.text(`#read-results`))
		}
		return value(b, step+": rows", chromedp.Evaluate[[]string](`[...document.querySelectorAll('tr[data-test=read-row]')].map((r) => r.textContent)`))
	}
	orderIDs := func(rows []string) []string {
		var ids []string
		for _, r := range rows {
			for _, id := range []string{"o-acme-1", "o-acme-2", "o-globex-1"} {
				if strings.HasPrefix(r, id) {
					ids = append(ids, id)
				}
			}
		}
		return ids
	}

	// The admin: the list, then the projection's page and a rebuild.
	signIn("sign in as root", "root", keyRoot, "")
	b.run("open Projections", chromedp.Navigate(s.URL+"/console/#/projections"),
		until(`document.body.dataset.ready === 'projections' && !!document.querySelector('tr[data-test=projection][data-name=order_summaries]')`))
	row := `tr[data-test=projection][data-name=order_summaries]`
	if got := b.attr(row, "data-live-build"); got != "1" {
		t.Fatalf("the list shows live build %q, want 1", got)
	}
	if got := b.text(row + ` [data-test=state]`); got != "caught up" {
		t.Fatalf("the list shows state %q, want caught up", got)
	}
	if got := b.text(row + ` [data-test=no-failure]`); got != "none" {
		t.Fatalf("the list shows last failure %q, want none", got)
	}
	b.shot(shots, "projections")
	b.run("open order_summaries", chromedp.Click(chromedp.CSS(row+` a`)),
		until(`document.body.dataset.ready === 'projections' && !!document.getElementById('projection')`))
	if got := b.attr(`tr[data-test=build-live]`, "data-number"); got != "1" {
		t.Fatalf("the builds show live build %q, want 1", got)
	}
	b.run("rebuild", chromedp.Click(chromedp.CSS(`[data-test=rebuild]`)), confirmDialog(),
		until(`(() => { const p = document.getElementById('projection'); return p.dataset.liveBuild === '2' && p.dataset.nextBuild === '' && p.dataset.state === 'caught up'; })()`))
	if st := projectionStatus(t, s.URL, keyRoot); st.Live == nil || st.Live.Number != 2 || st.Next != nil {
		t.Fatalf("after the console's rebuild the API answers %+v, want live build 2 and no next", st)
	}
	if got := b.text(`#toast`); !strings.Contains(got, "Switched to build #2") {
		t.Fatalf("the toast after the switch says %q", got)
	}
	b.run("reset and replay", chromedp.Click(chromedp.CSS(`[data-test=reset]`)), confirmDialog(),
		until(`(() => { const p = document.getElementById('projection'); return p.dataset.liveBuild === '2' && p.dataset.state === 'caught up'; })()`))

	// The admin's read queries, in each tenant: only that tenant's orders.
	if ids := orderIDs(runQuery("root's orders in its home tenant", "projections/shop/order_summaries", "shop/order_summaries/orders", nil)); len(ids) != 0 {
		t.Fatalf("root's home tenant holds no orders, the query shows %v", ids)
	}
	signIn("root switches to globex", "root", keyRoot, "globex")
	if ids := orderIDs(runQuery("root's orders in globex", "projections/shop/order_summaries", "shop/order_summaries/orders", nil)); fmt.Sprint(ids) != "[o-globex-1]" {
		t.Fatalf("globex's orders: %v, want [o-globex-1]", ids)
	}
	if got := b.attr(`[data-test=query-count]`, "data-build"); got != "2" {
		t.Fatalf("the query answered from build %q, want the rebuilt 2", got)
	}
	b.shotFull(shots, "projection")
	// A required parameter missing: the API's refusal shows.
	b.run("a query without its required parameter", js(`delete document.body.dataset.ready`), chromedp.Navigate(s.URL+"/console/#/projections?query=shop/order_summaries/order&n=0"),
		until(`document.body.dataset.ready === 'projections' && !!document.getElementById('read-form')`),
		chromedp.Click(chromedp.CSS(`#run-read-query`)),
		until(`!!document.querySelector('#read-results .error')`))
	if got := b.text(`#read-results .error`); !strings.Contains(got, "id is required") {
		t.Fatalf("the missing parameter's error says %q", got)
	}

	// A reader (acme, read only): the explanation, and its tenant's rows.
	signIn("sign in as reader", "reader", keyReader, "")
	for _, route := range []string{"projections", "projections/shop/order_summaries"} {
		b.run("the reader opens "+route, chromedp.Navigate(s.URL+"/console/#/"+route),
			until(`document.body.dataset.ready === 'projections' && !!document.querySelector('[data-test=not-admin]')`))
		if got := b.text(`[data-test=not-admin]`); !strings.Contains(got, "403") || !strings.Contains(got, "every tenant") {
			t.Fatalf("the reader's explanation on %s: %q", route, got)
		}
		if n := countOf(t, b, `[data-test=rebuild], tr[data-test=projection]`); n != 0 {
			t.Fatalf("the reader sees %d builds or actions on %s", n, route)
		}
	}
	if ids := orderIDs(runQuery("the reader's orders", "projections", "shop/order_summaries/orders", nil)); fmt.Sprint(ids) != "[o-acme-1 o-acme-2]" {
		t.Fatalf("the reader's orders: %v, want acme's [o-acme-1 o-acme-2]", ids)
	}
	if ids := orderIDs(runQuery("the reader asks for globex's order", "projections", "shop/order_summaries/order", map[string]string{"id": "o-globex-1"})); len(ids) != 0 {
		t.Fatalf("the reader reads another tenant's order: %v", ids)
	}
	if ids := orderIDs(runQuery("the reader's own order", "projections", "shop/order_summaries/order", map[string]string{"id": "o-acme-2"})); fmt.Sprint(ids) != "[o-acme-2]" {
		t.Fatalf("the reader's order o-acme-2: %v", ids)
	}
	if got := b.text(`[data-test=query-request]`); got != "GET /shop/projection/order_summaries/order?id=o-acme-2" {
		t.Fatalf("the form shows the request %q", got)
	}
	// Without NATS the cluster page says so (to a reader too: the API
	// has no such route then, so it answers 404 before any role check).
	b.run("the reader opens Cluster", chromedp.Navigate(s.URL+"/console/#/cluster"),
		until(`document.body.dataset.ready === 'cluster' && !!document.querySelector('[data-test=no-cluster]')`))
	signIn("root again", "root", keyRoot, "")
	b.run("root opens Cluster", chromedp.Navigate(s.URL+"/console/#/cluster"),
		until(`document.body.dataset.ready === 'cluster' && !!document.querySelector('[data-test=no-cluster]')`))
	if got := b.text(`[data-test=no-cluster]`); !strings.Contains(got, "without NATS") {
		t.Fatalf("the cluster page without NATS says %q", got)
	}
	if errs := b.errors(); len(errs) > 0 {
		t.Fatalf("JavaScript errors in the console log:\n%s", strings.Join(errs, "\n"))
	}
}

// js runs a JavaScript statement in the page.
func js(src string) chromedp.Action[chromedp.Void] {
	return chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		_, err := chromedp.Evaluate[any](src)(ctx, t)
		return err
	})
}

// projectionStatus reads the order summaries' status from the API.
func projectionStatus(t *testing.T, base, key string) projection.Status {
	t.Helper()
	req, err := http.NewRequest("GET", base+"/shop/projections/order_summaries", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set(auth.HeaderAPIKey, key)
	code, body := doReq(t, req)
	var st projection.Status
	if err := json.Unmarshal(body, &st); code != http.StatusOK || err != nil {
		t.Fatalf("status: %d %s", code, body)
	}
	return st
}
