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
// the instance c names, about a hundred a second, until ctx ends or limit
// were acknowledged, each at SENT only, and returns the requests
// acknowledged. Its carts stay far below the cart's
// limits, so that every one of them is appended once processed.
func sentLoad(ctx context.Context, c *crashtest.Client, prefix string, carts, limit int) []crashtest.Request {
	var acked []crashtest.Request
	for n := 0; ctx.Err() == nil && len(acked) < limit; n++ {
		body, _ := json.Marshal(map[string]any{"sku": fmt.Sprintf("sku-%d", (n/carts)%20), "qty": 1})
		req := crashtest.Request{Aggregate: "cart", ID: fmt.Sprintf("%s-%d", prefix, n%carts), Command: "add_item",
			RequestID: fmt.Sprintf("%s-%d", prefix, n), Body: body}
		res, err := c.Do(ctx, http.MethodPost, "/cart/"+req.ID+"/add_item", req.Body,
			"Command-Request-Id", req.RequestID, "Command-Wait-Stage", "SENT")
		if err == nil && res.Status == http.StatusOK {
			acked = append(acked, req)
		}
		// Paced, so that the requests span the load and the kill at a
		// size CI takes.
		select {
		case <-ctx.Done():
		case <-time.After(10 * time.Millisecond):
		}
	}
	return acked
}

// settleSent waits until Lookup at c finds every request acknowledged at
// SENT appended, and records each in the ledger at the version found, so
// that the audit checks it is stored exactly once there. A request still
// not found at the deadline was acknowledged and never processed: it
// fails the test. It returns how many it found.
func settleSent(t *testing.T, c *crashtest.Client, led *crashtest.Ledger, sent []crashtest.Request, deadline time.Time) int {
	t.Helper()
	found := 0
	for _, r := range sent {
		for {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			var res struct {
				AggregateVersion int    `json:"aggregateVersion"`
				RequestID        string `json:"requestId"`
			}
			err := c.GetJSON(ctx, "/cart/"+r.ID+"/request/"+r.RequestID, &res)
			cancel()
			var se *crashtest.StatusError
			if err == nil && res.RequestID == r.RequestID && res.AggregateVersion > 0 {
				led.Acked(r, res.AggregateVersion)
				found++
				break
			}
			if err != nil && !(errors.As(err, &se) && se.Status == http.StatusNotFound) {
				t.Errorf("lookup of %s acknowledged at SENT: %v", r.RequestID, err)
				break
			}
			if time.Now().After(deadline) {
				t.Errorf("request %s was acknowledged at SENT and never processed", r.RequestID)
				break
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	return found
}

// awaitBalance waits until every instance's /readyz reports all of them
// alive and its fair share of the partitions: from then on, partitions
// change hands only when an instance dies.
func awaitBalance(ctx context.Context, clients []*crashtest.Client, partitions int) error {
	for {
		balanced := true
		for _, c := range clients {
			var r struct {
				Partitions []int `json:"partitions"`
				Instances  int   `json:"instances"`
			}
			err := c.GetJSON(ctx, "/readyz", &r)
			share := partitions / len(clients)
			if err != nil || r.Instances != len(clients) || len(r.Partitions) < share || len(r.Partitions) > share+1 {
				balanced = false
				break
			}
		}
		if balanced {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("the instances did not settle their shares of the partitions: %w", ctx.Err())
		case <-time.After(50 * time.Millisecond):
		}
	}
}
