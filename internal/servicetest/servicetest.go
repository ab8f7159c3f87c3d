package servicetest

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/factum-go/factum"
	"github.com/jackc/pgx/v5"
	natsgo "github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// The environment variables holding the services' addresses.
const (
	PostgresEnv = "FACTUM_POSTGRES_URL"
	RedisEnv    = "FACTUM_REDIS_URL"
	NATSEnv     = "FACTUM_NATS_URL"
)

func inCI() bool { return os.Getenv("CI") == "true" }

// lookup returns the variable's value, skipping (or, under CI, failing) the
// test when it is unset.
func lookup(t testing.TB, env string) string {
	t.Helper()
	v := os.Getenv(env)
	if v == "" {
		if inCI() {
			t.Fatalf("%s is not set; CI must provide every service", env)
		}
		t.Skipf("%s is not set; set it to run this test against a real server", env)
	}
	return v
}

// reachable fails or skips the test unless host:port answers a TCP dial.
func reachable(t testing.TB, env, hostport string) {
	t.Helper()
	c, err := net.DialTimeout("tcp", hostport, 2*time.Second)
	if err != nil {
		if inCI() {
			t.Fatalf("%s=%s does not answer: %v", env, hostport, err)
		}
		t.Skipf("%s=%s does not answer: %v", env, hostport, err)
	}
	c.Close()
}

func hostPort(t testing.TB, env, raw, defPort string) string {
	t.Helper()
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		t.Fatalf("%s=%q is not a URL", env, raw)
	}
	if u.Port() == "" {
		return net.JoinHostPort(u.Hostname(), defPort)
	}
	return u.Host
}

// PostgresURL returns FACTUM_POSTGRES_URL, skipping or failing the test as
// the package documentation says.
func PostgresURL(t testing.TB) string {
	t.Helper()
	raw := lookup(t, PostgresEnv)
	reachable(t, PostgresEnv, hostPort(t, PostgresEnv, raw, "5432"))
	return raw
}

// PostgresSchema returns FACTUM_POSTGRES_URL and a fresh, empty schema name
// that is dropped (with everything in it) when the test ends.
func PostgresSchema(t testing.TB) (url, schema string) {
	t.Helper()
	url = PostgresURL(t)
	schema = "t_" + strings.ReplaceAll(factum.NewID(), "-", "")[:20]
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatalf("connect to %s: %v", PostgresEnv, err)
	}
	if _, err := conn.Exec(ctx, "CREATE SCHEMA "+schema); err != nil {
		conn.Close(ctx)
		t.Fatalf("create schema %s: %v", schema, err)
	}
	conn.Close(ctx)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		conn, err := pgx.Connect(ctx, url)
		if err != nil {
			t.Errorf("drop schema %s: %v", schema, err)
			return
		}
		defer conn.Close(ctx)
		if _, err := conn.Exec(ctx, "DROP SCHEMA "+schema+" CASCADE"); err != nil {
			t.Errorf("drop schema %s: %v", schema, err)
		}
	})
	return url, schema
}

// PostgresSchemaURL returns FACTUM_POSTGRES_URL with its search_path set
// to a fresh schema of PostgresSchema's: the one URL a server configured
// by URL alone (factum serve) needs to keep to a schema of the test's own.
func PostgresSchemaURL(t testing.TB) string {
	t.Helper()
	return SearchPathURL(PostgresSchema(t))
}

// SearchPathURL returns url with the search_path parameter set to schema.
func SearchPathURL(url, schema string) string {
	sep := "?"
	if strings.Contains(url, "?") {
		sep = "&"
	}
	return url + sep + "search_path=" + schema
}

// RedisURL returns FACTUM_REDIS_URL (redis://host:port/db).
func RedisURL(t testing.TB) string {
	t.Helper()
	raw := lookup(t, RedisEnv)
	reachable(t, RedisEnv, hostPort(t, RedisEnv, raw, "6379"))
	return raw
}

// NATSURL returns FACTUM_NATS_URL (nats://host:port), after making sure
// the server holds AnchorStream.
func NATSURL(t testing.TB) string {
	t.Helper()
	raw := lookup(t, NATSEnv)
	reachable(t, NATSEnv, hostPort(t, NATSEnv, raw, "4222"))
	if err := anchor(raw); err != nil {
		t.Fatal(err)
	}
	return raw
}

// NATSNamespace returns FACTUM_NATS_URL and a fresh namespace for
// `factum serve`'s NATS mode (--nats-namespace): the command stream
// (NAMESPACE_COMMANDS) and the lease bucket (namespace_leases) serve makes
// under it are deleted when the test ends.
func NATSNamespace(t testing.TB) (url, namespace string) {
	t.Helper()
	url = NATSURL(t)
	namespace = "t" + strings.ReplaceAll(factum.NewID(), "-", "")[18:]
	t.Cleanup(func() {
		if err := deleteNamespace(url, namespace); err != nil {
			t.Errorf("clean up NATS namespace %s: %v", namespace, err)
		}
	})
	return url, namespace
}

// JetStream connects to the NATS server at url with opts and returns the
// connection and its JetStream API; the connection is closed when the
// test ends, and a failure to connect fails the test.
func JetStream(t testing.TB, url string, opts ...natsgo.Option) (*natsgo.Conn, jetstream.JetStream) {
	t.Helper()
	nc, err := natsgo.Connect(url, opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	return nc, js
}

// withJetStream connects to the NATS server at url and runs do with ten
// seconds to finish in, then closes the connection.
func withJetStream(url string, do func(ctx context.Context, js jetstream.JetStream) error) error {
	nc, err := natsgo.Connect(url)
	if err != nil {
		return err
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return do(ctx, js)
}

// deleteNamespace deletes the command stream and the lease bucket of
// namespace; either may never have been made.
func deleteNamespace(url, namespace string) error {
	return withJetStream(url, func(ctx context.Context, js jetstream.JetStream) error {
		_ = js.DeleteStream(ctx, strings.ToUpper(namespace)+"_COMMANDS")
		_ = js.DeleteKeyValue(ctx, namespace+"_leases")
		return nil
	})
}

// UniquePrefix returns a short prefix unique to this test run, for keys in
// shared servers such as Redis.
func UniquePrefix(t testing.TB) string {
	t.Helper()
	return fmt.Sprintf("factumtest:%s:", strings.ReplaceAll(factum.NewID(), "-", "")[:16])
}
