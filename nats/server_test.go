package nats

import (
	"context"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	natsgo "github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// startServer runs a JetStream server in process on a random port, with
// its storage in a temporary directory, until the test ends.
func startServer(t testing.TB) *server.Server {
	t.Helper()
	return runServer(t, &server.Options{
		Host: "127.0.0.1", Port: -1, JetStream: true, StoreDir: t.TempDir(), NoLog: true, NoSigs: true,
	})
}

// runServer runs a server configured by opts in process until the test
// ends.
func runServer(t testing.TB, opts *server.Options) *server.Server {
	t.Helper()
	s, err := server.NewServer(opts)
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

// connect opens a connection of its own to the server at url and the lease
// bucket on it.
func connect(t *testing.T, url, bucket string) (*natsgo.Conn, jetstream.KeyValue) {
	t.Helper()
	nc, js := dial(t, url)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	kv, err := OpenLeaseBucket(ctx, js, bucket, 1)
	if err != nil {
		t.Fatal(err)
	}
	return nc, kv
}

// deleteBucket removes a bucket a test made on a shared server.
func deleteBucket(t *testing.T, url, bucket string) {
	nc, err := natsgo.Connect(url)
	if err != nil {
		t.Errorf("delete bucket %s: %v", bucket, err)
		return
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err == nil {
		err = js.DeleteKeyValue(context.Background(), bucket)
	}
	if err != nil {
		t.Errorf("delete bucket %s: %v", bucket, err)
	}
}
