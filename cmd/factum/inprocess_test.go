package main

import (
	"bufio"
	"context"
	"io"
	"strings"
	"testing"
)

// serveInProcess runs the serve command with args (after "serve") in this
// process until the test's clean-up, and returns the URL its start-up
// line names. The clean-up fails the test unless serve exits 0.
func serveInProcess(t *testing.T, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	done := make(chan int, 1)
	go func() {
		done <- run(ctx, append([]string{"serve"}, args...), pw, pw)
		pw.Close()
	}()
	lines := bufio.NewScanner(pr)
	var url string
	for url == "" && lines.Scan() {
		if _, rest, ok := strings.Cut(lines.Text(), "listening on "); ok {
			url, _, _ = strings.Cut(rest, " ")
		}
	}
	go io.Copy(io.Discard, pr)
	t.Cleanup(func() {
		cancel()
		if code := <-done; code != 0 {
			t.Errorf("serve exited %d", code)
		}
	})
	if url == "" {
		t.Fatal("no start-up line")
	}
	return url
}
