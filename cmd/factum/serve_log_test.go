package main

import (
	"context"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"
)

// accessLogOptions serves on the memory store with the access log on.
func accessLogOptions(format string) serveOptions {
	return serveOptions{
		Addr: "127.0.0.1:0", storeOptions: storeOptions{Memory: true}, DrainTimeout: 10 * time.Second,
		observeOptions: observeOptions{LogLevel: "info", LogFormat: format, AccessLog: true},
	}
}

// A request is answered while the log's output stalls: the request does
// not write its access line itself, and the line is written once the
// output goes on.
func TestServeAnswersWhileTheLogOutputStalls(t *testing.T) {
	sink := &gateSink{}
	s, err := startServer(context.Background(), accessLogOptions("text"), sink)
	if err != nil {
		t.Fatal(err)
	}
	gate := make(chan struct{})
	sink.mu.Lock()
	sink.gate = gate
	sink.mu.Unlock()
	open := func() {
		sink.mu.Lock()
		defer sink.mu.Unlock()
		if sink.gate != nil {
			close(sink.gate)
			sink.gate = nil
		}
	}
	t.Cleanup(func() {
		open()
		if !s.stopped.Load() {
			stopServer(t, s)
		}
	})
	// The timeout only ends a test that would hang.
	client := &http.Client{Timeout: 30 * time.Second}
	res, err := client.Post(s.URL+"/cart/stall-1/add_item", "application/json", strings.NewReader(`{"sku":"sku-1","qty":1}`))
	if err != nil {
		t.Fatalf("while the log output stalls: %v", err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusOK {
		t.Fatalf("status %d", res.StatusCode)
	}
	open()
	stopServer(t, s)
	if !strings.Contains(sink.String(), `msg="http request" method=POST route="POST /{aggregate}/{id}/{command}" status=200`) {
		t.Errorf("no access line for the command in:\n%s", sink.String())
	}
}

// Serve's shutdown (SIGTERM or SIGINT end its context) writes every line:
// each request's access line, then the drain's, in order, in both
// formats.
func TestServeWritesTheLastLinesAtShutdown(t *testing.T) {
	for _, format := range []string{"text", "json"} {
		t.Run(format, func(t *testing.T) {
			var logs syncBuffer
			ctx, stop := context.WithCancel(context.Background())
			defer stop()
			done := make(chan error, 1)
			go func() { done <- serve(ctx, accessLogOptions(format), &logs) }()
			listening := regexp.MustCompile(`factum: listening on (http://[^ ]+)`)
			var url string
			for deadline := time.Now().Add(20 * time.Second); url == ""; time.Sleep(10 * time.Millisecond) {
				if m := listening.FindStringSubmatch(logs.String()); m != nil {
					url = m[1]
				} else if time.Now().After(deadline) {
					t.Fatalf("serve did not start:\n%s", logs.String())
				}
			}
			const requests = 50
			for i := range requests {
				if status, b := post(t, fmt.Sprintf("%s/cart/last-%d/add_item", url, i), `{"sku":"sku-1","qty":1}`); status != http.StatusOK {
					t.Fatalf("status %d: %s", status, b)
				}
			}
			stop()
			if err := <-done; err != nil {
				t.Fatal(err)
			}
			lines := strings.Split(strings.TrimSuffix(logs.String(), "\n"), "\n")
			access, draining := 0, -1
			for i, line := range lines {
				switch {
				case strings.Contains(line, "http request") && strings.Contains(line, "{aggregate}/{id}/{command}"):
					if draining >= 0 {
						t.Errorf("access line %q after the drain's", line)
					}
					access++
				case line == "factum: draining…":
					draining = i
				}
			}
			if access != requests {
				t.Errorf("%d access lines, want %d:\n%s", access, requests, logs.String())
			}
			if draining < 0 || lines[len(lines)-1] != "factum: stopped" {
				t.Errorf("the log does not end with the drain and factum: stopped:\n%s", logs.String())
			}
		})
	}
}
