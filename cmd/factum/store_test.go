package main

import (
	"bufio"
	"context"
	"io"
	"strings"
	"testing"
)

// --memory keeps everything in memory even when FACTUM_POSTGRES_URL is
// set in the environment (as it is in CI): the variable is only the
// default of --postgres-url.
func TestServeMemoryWinsOverThePostgresVariable(t *testing.T) {
	t.Setenv("FACTUM_POSTGRES_URL", "postgres://127.0.0.1:1/nowhere?sslmode=disable")
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	done := make(chan int, 1)
	go func() {
		done <- run(ctx, []string{"serve", "--memory", "--addr", "127.0.0.1:0"}, pw, pw)
		pw.Close()
	}()
	lines := bufio.NewScanner(pr)
	var where string
	for where == "" && lines.Scan() {
		if strings.HasPrefix(lines.Text(), "factum: data ") {
			where = lines.Text()
		}
	}
	go io.Copy(io.Discard, pr)
	cancel()
	if code := <-done; code != 0 {
		t.Errorf("serve exited %d", code)
	}
	if !strings.Contains(where, "in memory") {
		t.Fatalf("serve --memory with FACTUM_POSTGRES_URL set says %q", where)
	}
}
