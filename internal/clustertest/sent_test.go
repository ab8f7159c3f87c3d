package clustertest_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/factum-go/factum/internal/crashtest"
)

// sentLoad sends add_item commands to carts of its own (prefix-0 …) at
// the instance c names until ctx ends, each acknowledged at SENT only, and
// returns the requests acknowledged. Its carts stay far below the cart's
// limits, so that every one of them is appended once processed.
func sentLoad(ctx context.Context, c *crashtest.Client, prefix string, carts int) []crashtest.Request {
	var acked []crashtest.Request
	for n := 0; ctx.Err() == nil; n++ {
		body, _ := json.Marshal(map[string]any{"sku": fmt.Sprintf("sku-%d", (n/carts)%20), "qty": 1})
		req := crashtest.Request{Aggregate: "cart", ID: fmt.Sprintf("%s-%d", prefix, n%carts), Command: "add_item",
			RequestID: fmt.Sprintf("%s-%d", prefix, n), Body: body}
		res, err := c.Do(ctx, http.MethodPost, "/cart/"+req.ID+"/add_item", req.Body,
			"Command-Request-Id", req.RequestID, "Command-Wait-Stage", "SENT")
		if err == nil && res.Status == http.StatusOK {
			acked = append(acked, req)
			continue
		}
		select {
		case <-ctx.Done():
		case <-time.After(20 * time.Millisecond):
		}
	}
	return acked
}

// settleSent waits until Lookup at c finds every request acknowledged at
// SENT appended, and records each in the ledger at the version found, so
// that the audit checks it is stored exactly once there. A request still
// not found when ctx ends was acknowledged and never processed: it fails
// the test. It returns how many it found.
func settleSent(ctx context.Context, t *testing.T, c *crashtest.Client, led *crashtest.Ledger, sent []crashtest.Request) int {
	t.Helper()
	found := 0
	for _, r := range sent {
		for {
			var res struct {
				AggregateVersion int    `json:"aggregateVersion"`
				RequestID        string `json:"requestId"`
			}
			err := c.GetJSON(ctx, "/cart/"+r.ID+"/request/"+r.RequestID, &res)
			var se *crashtest.StatusError
			if err == nil && res.RequestID == r.RequestID && res.AggregateVersion > 0 {
				led.Acked(r, res.AggregateVersion)
				found++
				break
			}
			if err != nil && !(errors.As(err, &se) && se.Status == http.StatusNotFound) && ctx.Err() == nil {
				t.Errorf("lookup of %s acknowledged at SENT: %v", r.RequestID, err)
				break
			}
			if ctx.Err() != nil {
				t.Errorf("request %s was acknowledged at SENT and never processed", r.RequestID)
				break
			}
			select {
			case <-ctx.Done():
			case <-time.After(50 * time.Millisecond):
			}
		}
	}
	return found
}
