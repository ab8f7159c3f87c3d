package crashtest

import (
	"context"
	"fmt"
	"time"

	"github.com/factum-go/factum/internal/serveproc"
)

// AwaitAck sends add_item commands to the cart id (fresh request IDs, each
// recorded in led) until one is acknowledged, and returns how long that
// took: the recovery time as a client sees it.
func AwaitAck(ctx context.Context, c *Client, led *Ledger, id string) (time.Duration, error) {
	start := time.Now()
	for n := 0; ; n++ {
		req := Request{Aggregate: "cart", ID: id, Command: "add_item", RequestID: fmt.Sprintf("%s-%d", id, n), Body: []byte(`{"sku":"sku-0","qty":1}`)}
		switch Send(ctx, c, led, req) {
		case OutcomeAcked:
			return time.Since(start), nil
		case OutcomeRejected, OutcomeInvalid:
			return 0, fmt.Errorf("probe %s: refused", req.RequestID)
		}
		select {
		case <-ctx.Done():
			return 0, fmt.Errorf("probe %s: no acknowledgement: %w", id, ctx.Err())
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// AwaitReadiness polls /readyz until its answer is ready (200) or not
// (anything else, or no answer), and returns how long that took.
func AwaitReadiness(ctx context.Context, c *Client, ready bool) (time.Duration, error) {
	start := time.Now()
	for {
		err := serveproc.Ready(ctx, c.HTTP(), c.Base())
		if (err == nil) == ready {
			return time.Since(start), nil
		}
		select {
		case <-ctx.Done():
			return 0, fmt.Errorf("/readyz never answered ready=%v (last: %v): %w", ready, err, ctx.Err())
		case <-time.After(20 * time.Millisecond):
		}
	}
}
