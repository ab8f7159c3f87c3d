package redis_test

import (
	"context"
	"testing"
	"time"

	"github.com/factum-go/factum/internal/servicetest"
	"github.com/factum-go/factum/redis"
)

func TestOpen(t *testing.T) {
	url := servicetest.RedisURL(t)
	c, err := redis.Open(context.Background(), url, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.Ping(context.Background()).Err(); err != nil {
		t.Fatal(err)
	}
}

func TestOpenFailsFast(t *testing.T) {
	if _, err := redis.Open(context.Background(), "redis://127.0.0.1:1/0", time.Second); err == nil {
		t.Fatal("open of a closed port succeeded")
	}
	if _, err := redis.Open(context.Background(), "not a url", time.Second); err == nil {
		t.Fatal("open of a bad URL succeeded")
	}
}
