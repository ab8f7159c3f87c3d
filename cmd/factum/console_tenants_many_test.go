package main

import (
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/factum-go/factum/auth"
)

// A credential of several tenants, none of them the default one, acts in
// no tenant until one is picked: the console signs it in to its first
// tenant, whose counts it shows, and it may switch to its other one.
func TestConsoleSignsInACredentialOfSeveralTenants(t *testing.T) {
	const keyMany = "fk_many-0123456789abcdefghijklmnopqrstu"
	b := newBrowser(t)
	var log strings.Builder
	s := startForTest(t, serveOptions{
		Addr: "127.0.0.1:0", storeOptions: storeOptions{DataDir: t.TempDir()},
		securityOptions: securityOptions{APIKeys: "many " + auth.HashKey(keyMany) + " tenants=acme,globex roles=send,read,operator;" + rootKeyEntry},
	}, &log)
	for _, path := range []string{"/tenant/acme/cart/c-a/add_item", "/tenant/globex/cart/c-g1/add_item", "/tenant/globex/cart/c-g2/add_item"} {
		if code, out := post(t, s.URL+path, `{"sku":"sku-1","qty":1}`, auth.HeaderAPIKey, keyMany, "Command-Wait-Stage", "SNAPSHOT"); code != 200 {
			t.Fatalf("%s: %d %s", path, code, out)
		}
	}

	b.run("sign in without a tenant", chromedp.Navigate(s.URL+"/console/"),
		until(`document.body.dataset.ready === 'overview'`),
		chromedp.SetValue(chromedp.CSS(`#credential`), keyMany),
		chromedp.Click(chromedp.CSS(`#session button[type=submit]`)),
		until(`document.getElementById('who').textContent.startsWith('many')`),
		until(`((document.querySelector('[data-test=count-cart] td.num')||{}).textContent) === '1'`))
	if got := value(b, "read #tenant", chromedp.Evaluate[string](`document.getElementById('tenant').value`)); got != "acme" {
		t.Fatalf("the tenant field holds %q, want the credential's first tenant, acme", got)
	}
	b.run("switch to globex", chromedp.SetValue(chromedp.CSS(`#tenant`), "globex"),
		chromedp.Click(chromedp.CSS(`#session button[type=submit]`)),
		until(`((document.querySelector('[data-test=count-cart] td.num')||{}).textContent) === '2'`))
	if errs := b.errors(); len(errs) > 0 {
		t.Fatalf("JavaScript errors in the console log:\n%s", strings.Join(errs, "\n"))
	}
}
