package main

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// The console's Cluster page on two real instances of the example service
// (one PostgreSQL database, the machine's NATS server): the admin sees
// both instances alive, their partitions adding up to all of them, none
// unowned, the NATS connection up, and a map naming each partition's
// owner as its instance's row does; when one instance stops, the page,
// reading the view again by itself, shows the other holding every
// partition. A reader that is no admin sees why it may not look.
func TestConsoleCluster(t *testing.T) {
	pgURL, natsURL, ns := clusterEnv(t)
	start := func(instance string) *server {
		t.Helper()
		opts := clusterOpts(pgURL, natsURL, ns, instance)
		opts.securityOptions = readerAndRoot
		var log strings.Builder
		return startForTest(t, opts, &log)
	}
	a := start("a")
	bs := start("b")
	// The shares settle at 4 and 4.
	awaitShares(t, 60*time.Second, a.URL, bs.URL, func(ra, rb clusterReady) bool {
		return len(ra.Partitions) == 4 && len(rb.Partitions) == 4 && ra.Instances == 2 && rb.Instances == 2
	})

	br := newBrowser(t)
	signIn := func(name, key string) {
		t.Helper()
		br.run("sign in as "+name, chromedp.Navigate(bs.URL+"/console/#/requests"),
			until(`document.body.dataset.ready === 'requests'`),
			js(fmt.Sprintf(`document.getElementById('credential').value = %q; document.getElementById('who').textContent = ''`, key)),
			chromedp.Click(chromedp.CSS(`#session button[type=submit]`)),
			until(fmt.Sprintf(`document.getElementById('who').textContent.startsWith(%q)`, name)))
	}

	signIn("reader", keyReader)
	br.run("the reader opens Cluster", chromedp.Navigate(bs.URL+"/console/#/cluster"),
		until(`document.body.dataset.ready === 'cluster' && !!document.querySelector('[data-test=not-admin]')`))
	if got := br.text(`[data-test=not-admin]`); !strings.Contains(got, "403") || !strings.Contains(got, "every tenant") {
		t.Fatalf("the reader's explanation: %q", got)
	}
	if n := countOf(t, br, `tr[data-test=instance]`); n != 0 {
		t.Fatalf("the reader sees %d instances", n)
	}

	signIn("root", keyRoot)
	br.run("root opens Cluster", chromedp.Navigate(bs.URL+"/console/#/cluster"),
		until(`document.body.dataset.ready === 'cluster' && document.querySelectorAll('tr[data-test=instance][data-alive=true]').length === 2`))
	for sel, want := range map[string]string{
		`[data-test=instance]`: "b", `[data-test=partitions]`: "8", `[data-test=alive]`: "2",
		`[data-test=connected]`: "connected", `[data-test=context]`: "shop", `[data-test=lease]`: "3 s",
	} {
		if got := br.text(sel); got != want {
			t.Fatalf("%s shows %q, want %q", sel, got, want)
		}
	}
	if got := br.attr(`[data-test=unowned]`, "data-count"); got != "0" {
		t.Fatalf("the page shows %s unowned partitions, want 0", got)
	}
	// Each instance's row and the map agree, and cover every partition
	// once.
	owners := value(br, "read the map", chromedp.Evaluate[map[string]int](`(() => {
		const out = {};
		for (const c of document.querySelectorAll('[data-test=partition]')) out[c.dataset.owner] = (out[c.dataset.owner] || 0) + 1;
		return out;
	})()`))
	for _, name := range []string{"a", "b"} {
		held := br.attr(fmt.Sprintf(`tr[data-test=instance][data-name=%s]`, name), "data-partitions")
		if fmt.Sprint(owners[name]) != held || held != "4" {
			t.Fatalf("instance %s holds %s partitions in its row and %d in the map, want 4 (map %v)", name, held, owners[name], owners)
		}
	}
	if len(owners) != 2 {
		t.Fatalf("the map names owners %v, want a and b only", owners)
	}

	br.shotFull(os.Getenv(screenshotsEnv) == "1", "cluster")

	// Instance a stops: b takes its partitions over, and the page shows it
	// without being asked.
	stopServer(t, a)
	ctx, cancel := context.WithTimeout(br.ctx, 90*time.Second)
	defer cancel()
	if err := chromedp.Do(ctx, until(`(() => {
		const b = document.querySelector('tr[data-test=instance][data-name=b]');
		return !!b && b.dataset.partitions === '8' && document.querySelectorAll('tr[data-test=instance][data-alive=true]').length === 1 &&
			document.querySelector('[data-test=unowned]').dataset.count === '0';
	})()`)); err != nil {
		br.fail("b holds every partition", err)
	}
	if n := countOf(t, br, `[data-test=partition][data-owner=b]`); n != 8 {
		t.Fatalf("the map names b the owner of %d partitions, want 8", n)
	}
	if errs := br.errors(); len(errs) > 0 {
		t.Fatalf("JavaScript errors in the console log:\n%s", strings.Join(errs, "\n"))
	}
}
