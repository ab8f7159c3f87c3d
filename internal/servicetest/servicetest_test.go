package servicetest_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/factum-go/factum/internal/servicetest"
	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go/jetstream"
)

func TestSearchPathURL(t *testing.T) {
	tests := []struct{ url, want string }{
		{"postgres://u@h:5432/db", "postgres://u@h:5432/db?search_path=t_x"},
		{"postgres://u@h:5432/db?sslmode=disable", "postgres://u@h:5432/db?sslmode=disable&search_path=t_x"},
	}
	for _, tt := range tests {
		if got := servicetest.SearchPathURL(tt.url, "t_x"); got != tt.want {
			t.Errorf("SearchPathURL(%q) = %q, want %q", tt.url, got, tt.want)
		}
	}
}

// The stream and the bucket made under a namespace are gone once the test
// that asked for it ends.
func TestNATSNamespaceIsDeletedAtTheEnd(t *testing.T) {
	servicetest.NATSURL(t) // skips here, not only in the subtest
	var url, ns string
	t.Run("user", func(t *testing.T) {
		url, ns = servicetest.NATSNamespace(t)
		if _, other := servicetest.NATSNamespace(t); other == ns {
			t.Fatalf("two namespaces are both %q", ns)
		}
		_, js := servicetest.JetStream(t, url)
		ctx := context.Background()
		if _, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: strings.ToUpper(ns) + "_COMMANDS", Subjects: []string{ns + ".cmd.>"}}); err != nil {
			t.Fatal(err)
		}
		if _, err := js.CreateKeyValue(ctx, jetstream.KeyValueConfig{Bucket: ns + "_leases"}); err != nil {
			t.Fatal(err)
		}
	})
	_, js := servicetest.JetStream(t, url)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := js.Stream(ctx, strings.ToUpper(ns)+"_COMMANDS"); !errors.Is(err, jetstream.ErrStreamNotFound) {
		t.Errorf("the stream after the test: %v", err)
	}
	if _, err := js.KeyValue(ctx, ns+"_leases"); !errors.Is(err, jetstream.ErrBucketNotFound) {
		t.Errorf("the bucket after the test: %v", err)
	}
}

// TestNATSURLKeepsTheAnchorStream checks that NATSURL makes a file stream
// no test deletes on a server that has none, so that deleting a test's
// last stream never removes the account's stream directory under another
// test's creation. It runs against a server of its own: the shared one
// holds the stream already.
func TestNATSURLKeepsTheAnchorStream(t *testing.T) {
	srv, err := server.NewServer(&server.Options{
		Host: "127.0.0.1", Port: -1, JetStream: true, StoreDir: t.TempDir(), NoLog: true, NoSigs: true,
	})
	if err != nil {
		t.Fatal(err)
	}
	go srv.Start()
	t.Cleanup(srv.Shutdown)
	if !srv.ReadyForConnections(10 * time.Second) {
		t.Fatal("nats server did not start")
	}
	t.Setenv(servicetest.NATSEnv, srv.ClientURL())
	url := servicetest.NATSURL(t)
	_, js := servicetest.JetStream(t, url)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	s, err := js.Stream(ctx, servicetest.AnchorStream)
	if err != nil {
		t.Fatalf("the anchor stream: %v", err)
	}
	if got := s.CachedInfo().Config.Storage; got != jetstream.FileStorage {
		t.Fatalf("the anchor stream's storage is %v, want file", got)
	}
}
