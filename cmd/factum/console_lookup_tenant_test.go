package main

import (
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/factum-go/factum/auth"
)

// A credential of one tenant other than default acts in that tenant
// without a prefix, so a create it sends without an ID gets the ID of its
// tenant: the console, signed in with it and no tenant picked, finds that
// create by its request ID alone.
func TestConsoleFindsACreateOfTheCredentialsOwnTenant(t *testing.T) {
	const keyAcme = "fk_acme-0123456789abcdefghijklmnopqrstu"
	b := newBrowser(t)
	var log strings.Builder
	s := startForTest(t, serveOptions{
		Addr: "127.0.0.1:0", storeOptions: storeOptions{DataDir: t.TempDir()},
		securityOptions: securityOptions{APIKeys: "acme " + auth.HashKey(keyAcme) + " tenants=acme roles=send,read;" + rootKeyEntry},
	}, &log)
	if code, out := post(t, s.URL+"/user/register_user", `{"username":"ann","email":"ann@example.com"}`,
		auth.HeaderAPIKey, keyAcme, "Command-Request-Id", "req-ann", "Command-Wait-Stage", "SNAPSHOT"); code != 200 {
		t.Fatalf("register: %d %s", code, out)
	}

	b.run("sign in", chromedp.Navigate(s.URL+"/console/"),
		until(`document.body.dataset.ready === 'overview'`),
		chromedp.SetValue(chromedp.CSS(`#credential`), keyAcme),
		chromedp.Click(chromedp.CSS(`#session button[type=submit]`)),
		until(`document.getElementById('who').textContent.startsWith('acme')`))
	b.run("find by request ID", findForm(s.URL, "aggregates", "user", "#find-request", "req-ann"),
		until(`!!document.querySelector('#state-at pre') || !!document.querySelector('[data-test=not-found]')`))
	if got := b.text(`#main`); !strings.Contains(got, "ann@example.com") {
		t.Fatalf("the create of the credential's tenant is not found by its request ID: %q", got)
	}
	if errs := b.errors(); len(errs) > 0 {
		t.Fatalf("JavaScript errors in the console log:\n%s", strings.Join(errs, "\n"))
	}
}
