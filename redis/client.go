package redis

import (
	"context"
	"fmt"
	"time"

	"github.com/factum-go/factum"
	goredis "github.com/redis/go-redis/v9"
)

// Open connects to the Redis server at url (redis://[:password@]host:port/db)
// and pings it, failing within timeout (default 5 s) when the server does not
// answer.
func Open(ctx context.Context, url string, timeout time.Duration) (*goredis.Client, error) {
	opts, err := goredis.ParseURL(url)
	if err != nil {
		return nil, factum.Errorf(factum.CodeIllegalArgument, "redis: parse URL: %w", err)
	}
	if timeout <= 0 {
		timeout = 5 * time.Second
	}
	opts.DialTimeout = timeout
	c := goredis.NewClient(opts)
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	if err := c.Ping(ctx).Err(); err != nil {
		c.Close()
		return nil, fmt.Errorf("redis: connect to %s: %w", opts.Addr, err)
	}
	return c, nil
}
