package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/internal/servicetest"
)

// clusterEnv returns a PostgreSQL URL with a schema of its own and a NATS
// URL with a namespace of its own, whose stream and bucket are deleted
// when the test ends.
func clusterEnv(t *testing.T) (pgURL, natsURL, namespace string) {
	t.Helper()
	natsURL, namespace = servicetest.NATSNamespace(t)
	return servicetest.PostgresSchemaURL(t), natsURL, namespace
}

// clusterOpts are an instance's options: a lease long enough that a
// loaded machine's stalls do not let partitions lapse (a command for a
// lapsed partition is a 503 until it is claimed again).
func clusterOpts(pgURL, natsURL, namespace, instance string) serveOptions {
	return serveOptions{
		Addr: "127.0.0.1:0", storeOptions: storeOptions{PostgresURL: pgURL}, DrainTimeout: 10 * time.Second,
		clusterOptions: clusterOptions{NATSURL: natsURL, Instance: instance, Partitions: 8, Lease: 3 * time.Second, Namespace: namespace},
	}
}

// readyz returns the instance's /readyz answer.
func readyz(t *testing.T, base string) (int, clusterReady) {
	t.Helper()
	code, body := get(t, base+"/readyz")
	var r clusterReady
	_ = json.Unmarshal(body, &r)
	return code, r
}

// awaitShares polls the /readyz of instances a and b (base URLs) until
// both are ready and settled holds of their answers, failing t after
// timeout.
func awaitShares(t *testing.T, timeout time.Duration, a, b string, settled func(ra, rb clusterReady) bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		ca, ra := readyz(t, a)
		cb, rb := readyz(t, b)
		if ca == http.StatusOK && cb == http.StatusOK && settled(ra, rb) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("readyz: a %d %+v, b %d %+v", ca, ra, cb, rb)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// Two instances on one database and one NATS share the partitions, list
// each other, and answer each other's waits: a command sent to either
// instance, for aggregates of every partition, completes at every stage
// whoever owns its partition and whoever holds the consumers' leases, and
// Lookup answers from the other.
func TestTwoServeInstancesShareTheWork(t *testing.T) {
	pgURL, natsURL, ns := clusterEnv(t)
	var logs [2]bytes.Buffer
	a := startForTest(t, clusterOpts(pgURL, natsURL, ns, "a"), &logs[0])
	b := startForTest(t, clusterOpts(pgURL, natsURL, ns, "b"), &logs[1])
	if !strings.Contains(logs[0].String(), "instance a of a cluster") {
		t.Fatalf("start-up message %q does not name the instance", logs[0].String())
	}

	// The shares settle at 4 and 4, each instance's /readyz reporting its.
	awaitShares(t, 30*time.Second, a.URL, b.URL, func(ra, rb clusterReady) bool {
		return len(ra.Partitions) == 4 && len(rb.Partitions) == 4 && ra.Instances == 2 && ra.Of == 8
	})
	code, body := get(t, b.URL+clusterPath)
	var view clusterInfo
	if err := json.Unmarshal(body, &view); code != http.StatusOK || err != nil {
		t.Fatalf("%s: %d %s", clusterPath, code, body)
	}
	if view.Instance != "b" || len(view.Instances) != 2 || !view.Connected || len(view.Unowned) != 0 ||
		len(view.Instances[0].Partitions)+len(view.Instances[1].Partitions) != 8 {
		t.Fatalf("cluster view %s", body)
	}

	var out, errOut bytes.Buffer
	if code := run(context.Background(), []string{"cluster", "--url", a.URL}, &out, &errOut); code != 0 ||
		!strings.Contains(out.String(), "instances") || !strings.Contains(out.String(), "unowned") {
		t.Fatalf("factum cluster: exit %d\n%s%s", code, out.String(), errOut.String())
	}

	waitHeaders := func(stage, req string) []string {
		return []string{"Command-Wait-Stage", stage, "Command-Request-Id", req, "Command-Wait-Timeout", "10s"}
	}
	sku := "sku-" + ns
	if code, body := post(t, a.URL+"/inventory/"+sku+"/restock", `{"qty":1000}`, waitHeaders("SNAPSHOT", "restock")...); code != http.StatusOK {
		t.Fatalf("restock: %d %s", code, body)
	}
	for i := range 16 { // aggregates spread over the partitions
		for j, s := range []*server{a, b} {
			for _, stage := range []string{"SNAPSHOT", "SAGA_HANDLED"} {
				id := fmt.Sprintf("o-%d-%d-%s", i, j, stage)
				req := "r-" + id
				code, body := post(t, s.URL+"/order/"+id+"/place_order", `{"sku":"`+sku+`","qty":1}`, waitHeaders(stage, req)...)
				if code != http.StatusOK || !strings.Contains(string(body), `"stage":"`+stage+`"`) {
					t.Fatalf("place %s at %d waiting for %s: %d %s", id, j, stage, code, body)
				}
				other := []*server{b, a}[j]
				code, body = get(t, other.URL+"/order/"+id+"/request/"+req)
				if code != http.StatusOK || !strings.Contains(string(body), `"aggregateVersion":1`) {
					t.Fatalf("lookup of %s at the other instance: %d %s", id, code, body)
				}
			}
		}
	}
	if sa, sb := a.cluster.signals.Stats(), b.cluster.signals.Stats(); sa.Sent+sb.Sent == 0 || sa.Received+sb.Received == 0 || sa.Dropped+sb.Dropped != 0 {
		t.Fatalf("signals: a %+v, b %+v; want some crossing, none dropped", sa, sb)
	}
}

// Clustered needs the shared database: SQLite and memory are refused with
// the fix, as are flags NATS cannot take.
func TestServeClusteredIsChecked(t *testing.T) {
	for name, o := range map[string]serveOptions{
		"sqlite":          {storeOptions: storeOptions{DataDir: t.TempDir()}, clusterOptions: clusterOptions{NATSURL: "nats://127.0.0.1:1", Partitions: 4, Lease: time.Second, Namespace: "f"}},
		"memory":          {storeOptions: storeOptions{Memory: true, PostgresURL: "postgres://x"}, clusterOptions: clusterOptions{NATSURL: "nats://127.0.0.1:1", Partitions: 4, Lease: time.Second, Namespace: "f"}},
		"a dotted name":   {storeOptions: storeOptions{PostgresURL: "postgres://x"}, clusterOptions: clusterOptions{NATSURL: "nats://127.0.0.1:1", Instance: "a.b", Partitions: 4, Lease: time.Second, Namespace: "f"}},
		"no partitions":   {storeOptions: storeOptions{PostgresURL: "postgres://x"}, clusterOptions: clusterOptions{NATSURL: "nats://127.0.0.1:1", Partitions: 0, Lease: time.Second, Namespace: "f"}},
		"a short lease":   {storeOptions: storeOptions{PostgresURL: "postgres://x"}, clusterOptions: clusterOptions{NATSURL: "nats://127.0.0.1:1", Partitions: 4, Lease: time.Millisecond, Namespace: "f"}},
		"a wild prefix":   {storeOptions: storeOptions{PostgresURL: "postgres://x"}, clusterOptions: clusterOptions{NATSURL: "nats://127.0.0.1:1", Partitions: 4, Lease: time.Second, Namespace: "f.>"}},
		"an empty prefix": {storeOptions: storeOptions{PostgresURL: "postgres://x"}, clusterOptions: clusterOptions{NATSURL: "nats://127.0.0.1:1", Partitions: 4, Lease: time.Second}},
	} {
		_, err := startServer(context.Background(), o, &bytes.Buffer{})
		if factum.CodeOf(err) != factum.CodeIllegalArgument {
			t.Errorf("%s: %v, want IllegalArgument", name, err)
		}
		if name == "sqlite" && (err == nil || !strings.Contains(err.Error(), "--postgres-url")) {
			t.Errorf("sqlite: %v does not name the fix", err)
		}
	}
	// A URL from the environment gives way to SQLite and memory.
	o := serveOptions{Addr: "127.0.0.1:0", storeOptions: storeOptions{Memory: true},
		clusterOptions: clusterOptions{NATSURL: "nats://127.0.0.1:1", Partitions: 4, Lease: time.Second, Namespace: "f", fromEnv: true}}
	var log bytes.Buffer
	s, err := startServer(context.Background(), o, &log)
	if err != nil {
		t.Fatalf("memory with FACTUM_NATS_URL set: %v", err)
	}
	stopServer(t, s)
	if s.cluster != nil || !strings.Contains(log.String(), "FACTUM_NATS_URL ignored") {
		t.Fatalf("memory with FACTUM_NATS_URL set: clustered %v, said %q", s.cluster != nil, log.String())
	}
	if name := defaultInstance(); name == "" || strings.ContainsAny(name, ". *>") {
		t.Fatalf("default instance name %q", name)
	}
}
