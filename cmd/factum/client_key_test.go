package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

// The client commands send an API key (--api-key or FACTUM_API_KEY) to a
// server that requires credentials; bench does too.
func TestClientCommandsSendTheAPIKey(t *testing.T) {
	keys := writeMatrixKeys(t)
	url := serveInProcess(t, "--memory", "--addr", "127.0.0.1:0", "--api-keys-file", keys)
	cli := func(args ...string) (int, string) {
		var out, errOut bytes.Buffer
		code := run(context.Background(), args, &out, &errOut)
		return code, out.String() + errOut.String()
	}
	if code, out := cli("state", "--url", url, "--tenant", "acme", "cart", "c-1"); code == 0 || !strings.Contains(out, "401") {
		t.Fatalf("without a key: exit %d, %s", code, out)
	}
	if code, out := cli("send", "--url", url, "--tenant", "acme", "--api-key", matrixKey("acme", "all"), "cart", "c-1", "add_item", `{"sku":"sku-1","qty":1}`); code != 0 {
		t.Fatalf("send with --api-key: exit %d, %s", code, out)
	}
	t.Setenv("FACTUM_API_KEY", matrixKey("acme", "read"))
	if code, out := cli("state", "--url", url, "--tenant", "acme", "cart", "c-1"); code != 0 || !strings.Contains(out, "c-1") {
		t.Fatalf("state with FACTUM_API_KEY: exit %d, %s", code, out)
	}
	t.Setenv("FACTUM_API_KEY", matrixKey("acme", "all"))
	if code, out := cli("bench", "--url", url+"/tenant/acme", "--total", "20", "--concurrency", "2"); code != 0 {
		t.Fatalf("bench with FACTUM_API_KEY: exit %d, %s", code, out)
	}
}
