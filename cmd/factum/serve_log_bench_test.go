package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// BenchmarkServeAccessLog measures one add_item up to PROCESSED over HTTP
// through serve on SQLite at 64 concurrent requests, with the access log
// written to a file (on) and without it (off): the ratio of the two is
// the access log's cost, in wall time per request (ns/op) and in the
// process's CPU time per request (cpu-ns/op). The machine's load moves both alike; run the
// halves alternately and compare medians:
//
//	go test -c -o /tmp/factum.test ./cmd/factum
//	for i in 1 2 3 4 5; do for v in on off; do
//	  /tmp/factum.test -test.run '^$' -test.bench "ServeAccessLog/$v\$" -test.benchtime 5s
//	done; done
func BenchmarkServeAccessLog(b *testing.B) {
	for _, on := range []bool{true, false} {
		name := map[bool]string{true: "on", false: "off"}[on]
		b.Run(name, func(b *testing.B) {
			dir := b.TempDir()
			out, err := os.Create(filepath.Join(dir, "serve.log"))
			if err != nil {
				b.Fatal(err)
			}
			defer out.Close()
			opts := serveOptions{
				Addr: "127.0.0.1:0", storeOptions: storeOptions{DataDir: filepath.Join(dir, "data")}, DrainTimeout: 30 * time.Second,
				observeOptions: observeOptions{LogLevel: "info", LogFormat: "text", AccessLog: on},
			}
			s, err := startServer(context.Background(), opts, out)
			if err != nil {
				b.Fatal(err)
			}
			defer func() {
				ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
				defer cancel()
				if err := s.Shutdown(ctx); err != nil {
					b.Error(err)
				}
			}()
			client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 128}}
			run := time.Now().UnixNano()
			var n atomic.Int64
			b.SetParallelism(32) // 64 requests in flight on 2 CPUs
			cpu0 := cpuTime(b)
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					i := n.Add(1)
					url := fmt.Sprintf("%s/cart/b-%d-%d/add_item", s.URL, run, i/10)
					res, err := client.Post(url, "application/json", strings.NewReader(fmt.Sprintf(`{"sku":"sku-%d","qty":1}`, i%3+1)))
					if err != nil {
						b.Error(err)
						return
					}
					_, _ = io.Copy(io.Discard, res.Body)
					res.Body.Close()
					if res.StatusCode != http.StatusOK {
						b.Errorf("status %d", res.StatusCode)
						return
					}
				}
			})
			b.StopTimer()
			// The process's CPU time (server and client) per request: other
			// jobs on the machine do not count in it.
			b.ReportMetric(float64((cpuTime(b)-cpu0).Nanoseconds())/float64(b.N), "cpu-ns/op")
		})
	}
}

// cpuTime returns the CPU time the process has used, user and system.
func cpuTime(b *testing.B) time.Duration {
	b.Helper()
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
