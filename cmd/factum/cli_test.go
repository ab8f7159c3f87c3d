package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net"
	"strings"
	"testing"
)

func cliRun(args ...string) (code int, stdout, stderr string) {
	var out, errOut bytes.Buffer
	code = run(context.Background(), args, &out, &errOut)
	return code, out.String(), errOut.String()
}

func TestCLIUsageOnMistakes(t *testing.T) {
	for _, args := range [][]string{
		{"send", "cart", "cart-1", "add_item", "--no-such-flag"},
		{"lookup", "cart"},
		{"bench", "--concurrency", "many"},
		{"no-such-command"},
	} {
		code, _, stderr := cliRun(args...)
		if code != 2 || !strings.Contains(stderr, "Usage:") {
			t.Errorf("%v: exit %d, stderr %q; want 2 with the usage", args, code, stderr)
		}
	}
}

// downURL returns the URL of a local port nothing listens on.
func downURL(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return "http://" + ln.Addr().String()
}

func TestCLIServerErrorsAreClear(t *testing.T) {
	down := downURL(t)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"lookup", "cart", "c1", "r1", "--url", down}, "no factum server at " + down + " (connection refused)"},
		{[]string{"lookup", "cart", "c1", "r1", "--url", "127.0.0.1:8080"}, `server URL "127.0.0.1:8080" has no scheme: use http://127.0.0.1:8080`},
		{[]string{"lookup", "cart", "c1", "r1", "--url", "ftp://host"}, "the scheme must be http or https"},
		{[]string{"bench", "--url", "localhost:1", "--quiet"}, "has no scheme"},
	} {
		code, _, stderr := cliRun(c.args...)
		if code != 1 || !strings.Contains(stderr, c.want) {
			t.Errorf("%v: exit %d, stderr %q; want 1 and %q", c.args, code, stderr, c.want)
		}
	}
}

func TestCLIVersionAndCompletion(t *testing.T) {
	code, out, _ := cliRun("--version")
	if code != 0 || !strings.HasPrefix(out, "factum ") || !strings.Contains(out, "go1.") {
		t.Fatalf("--version: %d %q", code, out)
	}
	for _, shell := range []string{"bash", "zsh", "fish", "powershell"} {
		code, out, stderr := cliRun("completion", shell)
		if code != 0 || !strings.Contains(out, "factum") {
			t.Errorf("completion %s: %d %q", shell, code, stderr)
		}
	}
}

// TestCLIReadCommandsJSON: every read command prints text by default and
// the server's JSON with --json.
func TestCLIReadCommandsJSON(t *testing.T) {
	s := startTestServer(t, t.TempDir())
	if code, _, stderr := cliRun("send", "cart", "cart-1", "add_item", `{"sku":"sku-1","qty":1}`, "--request-id", "r1", "--wait", "SNAPSHOT", "--url", s.URL); code != 0 {
		t.Fatalf("send: %s", stderr)
	}
	for _, args := range [][]string{
		{"send", "cart", "cart-1", "add_item", `{"sku":"sku-2","qty":1}`},
		{"state", "cart", "cart-1"},
		{"state", "cart", "cart-1", "1"},
		{"state", "cart", "cart-1", "--snapshot"},
		{"events", "cart", "cart-1"},
		{"lookup", "cart", "cart-1", "r1"},
		{"query", "cart", "list"},
		{"query", "cart", "paged", `{"pagination":{"index":1,"size":5}}`},
		{"query", "cart", "count"},
		{"compensation", "list"},
		{"compensation", "counts"},
	} {
		code, text, stderr := cliRun(append(args, "--url", s.URL)...)
		if code != 0 || text == "" {
			t.Errorf("%v: %d %q", args, code, stderr)
			continue
		}
		if args[0] != "query" || args[2] != "count" {
			if json.Valid([]byte(text)) {
				t.Errorf("%v: the default output is JSON, want text: %s", args, text)
			}
		}
		code, js, stderr := cliRun(append(args, "--url", s.URL, "--json")...)
		if code != 0 || !json.Valid([]byte(js)) {
			t.Errorf("%v --json: %d %q %s", args, code, js, stderr)
		}
	}
	_, text, _ := cliRun("lookup", "cart", "cart-1", "r1", "--url", s.URL)
	if !strings.Contains(text, "shop.cart/cart-1@default") || !strings.Contains(text, "aggregateVersion") {
		t.Errorf("lookup text %q", text)
	}
}
