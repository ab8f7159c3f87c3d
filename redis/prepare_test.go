package redis_test

import (
	"context"
	"testing"
	"time"

	"github.com/factum-go/factum/internal/servicetest"
	"github.com/factum-go/factum/prepare"
	"github.com/factum-go/factum/prepare/preparetest"
	"github.com/factum-go/factum/redis"
	goredis "github.com/redis/go-redis/v9"
)

// openPrepare returns a backend under a prefix unique to the test, whose
// keys are deleted when the test ends.
func openPrepare(t testing.TB, poolSize int) (*redis.PrepareBackend, *goredis.Client, string) {
	t.Helper()
	url := servicetest.RedisURL(t)
	client, err := redis.Open(context.Background(), url, 0)
	if err != nil {
		t.Fatal(err)
	}
	if poolSize > 0 {
		opts := client.Options()
		client.Close()
		opts.PoolSize = poolSize
		client = goredis.NewClient(opts)
	}
	prefix := servicetest.UniquePrefix(t) + "prepare:"
	t.Cleanup(func() {
		deletePrefix(t, client, prefix)
		client.Close()
	})
	b, err := redis.NewPrepareBackend(client, redis.PrepareOptions{Prefix: prefix})
	if err != nil {
		t.Fatal(err)
	}
	return b, client, prefix
}

func deletePrefix(t testing.TB, client *goredis.Client, prefix string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	iter := client.Scan(ctx, 0, prefix+"*", 1000).Iterator()
	var keys []string
	for iter.Next(ctx) {
		keys = append(keys, iter.Val())
		if len(keys) == 1000 {
			client.Unlink(ctx, keys...)
			keys = keys[:0]
		}
	}
	if len(keys) > 0 {
		client.Unlink(ctx, keys...)
	}
	if err := iter.Err(); err != nil {
		t.Errorf("clean up %s*: %v", prefix, err)
	}
}

func TestPrepareContract(t *testing.T) {
	b, _, prefix := openPrepare(t, 0)
	// A second instance with a client of its own, as another process
	// would have. Redis runs each command and script alone and offers no
	// lock to hold.
	peerClient, err := redis.Open(context.Background(), servicetest.RedisURL(t), 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { peerClient.Close() })
	peer, err := redis.NewPrepareBackend(peerClient, redis.PrepareOptions{Prefix: prefix})
	if err != nil {
		t.Fatal(err)
	}
	preparetest.Run(t, func(t *testing.T) preparetest.Target {
		return preparetest.Target{Backend: b, Peer: peer, DropsExpired: true}
	})
}

// The script cache is empty after a restart or SCRIPT FLUSH; every script
// must fall back to EVAL and still work.
func TestPrepareAfterScriptFlush(t *testing.T) {
	b, client, _ := openPrepare(t, 0)
	ctx := context.Background()
	k, err := prepare.NewKey[string]("sku", b)
	if err != nil {
		t.Fatal(err)
	}
	if ok, err := k.Prepare(ctx, "a", prepare.Forever("v")); !ok || err != nil {
		t.Fatal(ok, err)
	}
	steps := []func() (bool, error){
		func() (bool, error) { _, ok, err := k.Get(ctx, "a"); return ok, err },
		func() (bool, error) { return k.Reprepare(ctx, "a", "v", prepare.Forever("w")) },
		func() (bool, error) { return k.ChangeKey(ctx, "a", "w", "b", prepare.Forever("w")) },
		func() (bool, error) { return k.RollbackValue(ctx, "b", "w") },
	}
	for i, step := range steps {
		if err := client.ScriptFlush(ctx).Err(); err != nil {
			t.Fatal(err)
		}
		if ok, err := step(); !ok || err != nil {
			t.Fatalf("step %d after SCRIPT FLUSH = %v, %v; want true", i, ok, err)
		}
	}
}

// The layout is part of the contract: operators look keys up, and the
// hash tag keeps one name's keys in one cluster slot. The tag is the first
// "{…}" of the key, which is the name's even when the application key holds
// braces itself ("{bob}").
func TestPrepareKeyLayout(t *testing.T) {
	b, client, prefix := openPrepare(t, 0)
	ctx := context.Background()
	k, err := prepare.NewKey[string]("username", b)
	if err != nil {
		t.Fatal(err)
	}
	exp := time.Now().Add(time.Hour).UnixMilli()
	for _, key := range []string{"alice", "{bob}"} {
		if ok, err := k.Prepare(ctx, key, prepare.PreparedValue[string]{Value: "u-1", ExpiresAt: exp}); !ok || err != nil {
			t.Fatal(ok, err)
		}
		rk := prefix + "{username}:" + key
		if got, err := client.Get(ctx, rk).Result(); err != nil || got != `"u-1"` {
			t.Fatalf("GET %s = %q, %v; want the JSON value", rk, got, err)
		}
		if got, err := client.PExpireTime(ctx, rk).Result(); err != nil || got.Milliseconds() != exp {
			t.Fatalf("PEXPIRETIME %s = %v, %v; want %d ms (native expiry)", rk, got, err, exp)
		}
	}
	if ok, err := k.Prepare(ctx, "carol", prepare.Forever("u-3")); !ok || err != nil {
		t.Fatal(ok, err)
	}
	if ttl, err := client.PTTL(ctx, prefix+"{username}:carol").Result(); err != nil || ttl != -1 {
		t.Fatalf("PTTL of a forever reservation = %v, %v; want -1 (no expiry)", ttl, err)
	}
}

func TestNewPrepareBackendRefusesBadOptions(t *testing.T) {
	client := goredis.NewClient(&goredis.Options{Addr: "127.0.0.1:1"})
	defer client.Close()
	for _, prefix := range []string{"a{b", "a}b"} {
		if _, err := redis.NewPrepareBackend(client, redis.PrepareOptions{Prefix: prefix}); err == nil {
			t.Fatalf("prefix %q accepted", prefix)
		}
	}
	if _, err := redis.NewPrepareBackend(nil, redis.PrepareOptions{}); err == nil {
		t.Fatal("nil client accepted")
	}
}
