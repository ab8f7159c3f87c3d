package main

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/factum-go/factum/auth"
)

// The console with credentials: a tenant's operator sees only its tenant
// (counts, failures), cannot switch to another, and its retry is recorded
// under its name; an admin may switch to any tenant.
func TestConsoleTenantScoping(t *testing.T) {
	const keySupport = "fk_support-0123456789abcdefghijklmnopq"
	b := newBrowser(t)
	var log strings.Builder
	s := startForTest(t, serveOptions{
		Addr: "127.0.0.1:0", storeOptions: storeOptions{DataDir: t.TempDir()},
		securityOptions: securityOptions{APIKeys: "support " + auth.HashKey(keySupport) + " tenants=acme roles=send,read,operator;" + rootKeyEntry},
	}, &log)
	send := func(path, body, key string) {
		t.Helper()
		if code, out := post(t, s.URL+path, body, auth.HeaderAPIKey, key, "Command-Wait-Stage", "SNAPSHOT"); code != http.StatusOK {
			t.Fatalf("%s: %d %s", path, code, out)
		}
	}
	send("/cart/c-a/add_item", `{"sku":"sku-1","qty":1}`, keySupport)
	send("/tenant/globex/cart/c-g1/add_item", `{"sku":"sku-1","qty":1}`, keyRoot)
	send("/tenant/globex/cart/c-g2/add_item", `{"sku":"sku-1","qty":1}`, keyRoot)
	send("/user/register_user", `{"username":"ann","email":"ann@greylist.example"}`, keySupport)
	send("/tenant/globex/user/register_user", `{"username":"gus","email":"gus@greylist.example"}`, keyRoot)
	for _, tenant := range []string{"acme", "globex"} {
		waitForCount(t, s.URL+"/tenant/"+tenant+"/compensation/counts", keyRoot, `"failed":1`)
	}

	b.run("open without a credential", chromedp.Navigate(s.URL+"/console/"),
		until(`document.body.dataset.ready === 'overview' && document.getElementById('who').textContent === 'a credential is required'`))
	b.run("sign in as support", chromedp.SetValue(chromedp.CSS(`#credential`), keySupport),
		chromedp.Click(chromedp.CSS(`#session button[type=submit]`)),
		until(`document.getElementById('who').textContent.startsWith('support')`),
		until(`!!document.querySelector('[data-test=count-cart]')`))
	if got := b.text(`[data-test=count-cart] td.num`); got != "1" {
		t.Fatalf("support counts %q carts, want its tenant's 1", got)
	}
	// This serve runs without --metrics: the overview says so, no panel.
	if got := b.text(`[data-test=metrics-off]`); !strings.Contains(got, "Metrics are off") {
		t.Fatalf("the overview without metrics says %q", got)
	}
	if n := countOf(t, b, `[data-test=metrics]`); n != 0 {
		t.Fatalf("the overview without metrics shows %d metrics panels", n)
	}
	b.run("support's failures", chromedp.Navigate(s.URL+"/console/#/failures"),
		until(`document.body.dataset.ready === 'failures' && document.querySelectorAll('tr[data-test=execution]').length === 1`),
		chromedp.Click(chromedp.CSS(`tr[data-test=execution] a`)),
		until(`!!document.querySelector('[data-test=force-retry]')`))
	if got := b.text(`main`); strings.Contains(got, "gus") {
		t.Fatalf("support sees globex's execution: %q", got)
	}
	b.run("retry as support", chromedp.Click(chromedp.CSS(`[data-test=force-retry]`)), confirmDialog(),
		until(`(document.querySelector('[data-test=status]')||{}).textContent === 'SUCCEEDED'`))
	if got := b.text(`ol.history`); !strings.Contains(got, "by support") {
		t.Fatalf("the retry is not recorded under the principal's name: %q", got)
	}
	b.run("support may not switch", chromedp.SetValue(chromedp.CSS(`#tenant`), "globex"),
		chromedp.Click(chromedp.CSS(`#session button[type=submit]`)),
		until(`document.getElementById('toast').textContent.includes('holds only the tenants acme')`))

	b.run("an admin switches", chromedp.SetValue(chromedp.CSS(`#credential`), keyRoot),
		chromedp.SetValue(chromedp.CSS(`#tenant`), "globex"),
		chromedp.Navigate(s.URL+"/console/#/overview"),
		chromedp.Click(chromedp.CSS(`#session button[type=submit]`)),
		until(`document.getElementById('who').textContent.startsWith('root')`),
		until(`((document.querySelector('[data-test=count-cart] td.num')||{}).textContent) === '2'`),
		until(`((document.querySelector('[data-test=backlog-failed] td.num')||{}).textContent) === '1'`))
	if errs := b.errors(); len(errs) > 0 {
		t.Fatalf("JavaScript errors in the console log:\n%s", strings.Join(errs, "\n"))
	}
}

// waitForCount waits until GET url, with key, answers a body holding want.
func waitForCount(t *testing.T, url, key, want string) {
	t.Helper()
	for range 300 {
		req, err := http.NewRequest("GET", url, nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set(auth.HeaderAPIKey, key)
		if code, body := doReq(t, req); code == http.StatusOK && strings.Contains(string(body), want) {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("%s never answered %s", url, want)
}
