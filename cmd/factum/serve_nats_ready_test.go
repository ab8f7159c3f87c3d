package main

import (
	"bytes"
	"context"
	"net/http"
	neturl "net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/factum-go/factum/internal/servicetest"
	natsserver "github.com/nats-io/nats-server/v2/server"
)

// startNATSAt runs a JetStream server in process on port (-1: a free one)
// with its storage in dir.
func startNATSAt(t *testing.T, port int, dir string) *natsserver.Server {
	t.Helper()
	s, err := natsserver.NewServer(&natsserver.Options{Host: "127.0.0.1", Port: port, JetStream: true, StoreDir: dir, NoLog: true, NoSigs: true})
	if err != nil {
		t.Fatal(err)
	}
	go s.Start()
	if !s.ReadyForConnections(10 * time.Second) {
		t.Fatal("nats server did not start")
	}
	t.Cleanup(s.Shutdown)
	return s
}

// natsPort is the port of a client URL such as nats://127.0.0.1:4222.
func natsPort(t *testing.T, url string) int {
	t.Helper()
	u, err := neturl.Parse(url)
	if err != nil {
		t.Fatal(err)
	}
	port, err := strconv.Atoi(u.Port())
	if err != nil {
		t.Fatal(err)
	}
	return port
}

// awaitReadyz polls /readyz until ok says its answer is the one wanted.
func awaitReadyz(t *testing.T, base, what string, ok func(code int, r clusterReady, body string) bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		code, body := get(t, base+"/readyz")
		_, r := readyz(t, base)
		if ok(code, r, string(body)) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("readyz never %s: %d %s", what, code, body)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// /readyz is not ready while the instance has no NATS connection, saying
// so, and ready again, with its partitions, once NATS is back: the
// instance reconnects and takes its partitions again by itself.
func TestReadyzFollowsTheNATSConnection(t *testing.T) {
	url := servicetest.PostgresSchemaURL(t)
	dir := t.TempDir()
	ns := startNATSAt(t, -1, dir)
	addr := ns.ClientURL()
	var log bytes.Buffer
	s, err := startServer(context.Background(), clusterOpts(url, addr, "factum", "solo"), &log)
	if err != nil {
		t.Fatal(err)
	}
	defer stopServer(t, s)
	awaitReadyz(t, s.URL, "ready with every partition", func(code int, r clusterReady, _ string) bool {
		return code == http.StatusOK && r.Instance == "solo" && len(r.Partitions) == 8 && r.Of == 8 && r.Instances == 1
	})

	ns.Shutdown()
	ns.WaitForShutdown()
	awaitReadyz(t, s.URL, "not ready for want of NATS", func(code int, _ clusterReady, body string) bool {
		return code == http.StatusServiceUnavailable && strings.Contains(body, "NATS")
	})

	startNATSAt(t, natsPort(t, addr), dir)
	awaitReadyz(t, s.URL, "ready again with every partition", func(code int, r clusterReady, _ string) bool {
		return code == http.StatusOK && len(r.Partitions) == 8
	})
	if code, body := post(t, s.URL+"/inventory/apple/restock", `{"qty":2}`, "Command-Wait-Stage", "SNAPSHOT"); code != http.StatusOK {
		t.Fatalf("restock after NATS came back: %d %s", code, body)
	}
}
