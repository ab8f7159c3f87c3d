package redis

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/factum-go/factum"
	goredis "github.com/redis/go-redis/v9"
)

// Open connects to the Redis server at url (redis://[:password@]host:port/db)
// and pings it, failing within timeout (default 5 s) when the server does not
// answer. The client does not resend a command whose connection broke
// (unless the URL sets max_retries): such a command's outcome is unknown,
// and it comes back as an error.
func Open(ctx context.Context, url string, timeout time.Duration) (*goredis.Client, error) {
	opts, err := goredis.ParseURL(url)
	if err != nil {
		return nil, factum.Errorf(factum.CodeIllegalArgument, "redis: parse URL: %w", err)
	}
	if timeout <= 0 {
		timeout = 5 * time.Second
	}
	opts.DialTimeout = timeout
	// go-redis resends a command whose connection broke after it was
	// written. For SET NX and the scripts that is not safe: the first
	// send may have been applied, and the resend then reports the
	// caller's own reservation as taken by another (or its own
	// idempotency claim as in progress). An error is the honest answer:
	// the outcome is unknown. A URL setting max_retries keeps its choice.
	if !strings.Contains(url, "max_retries=") {
		opts.MaxRetries = -1
	}
	c := goredis.NewClient(opts)
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	if err := c.Ping(ctx).Err(); err != nil {
		c.Close()
		return nil, fmt.Errorf("redis: connect to %s: %w", opts.Addr, err)
	}
	return c, nil
}
