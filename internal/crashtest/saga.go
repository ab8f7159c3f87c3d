package crashtest

import (
	"context"
	"encoding/json"
	"fmt"
	"time"
)

// SagaReport is what CheckSagasComplete found.
type SagaReport struct {
	// Orders is the number of acknowledged orders checked; Confirmed and
	// Rejected how they ended; Pending those still pending at the deadline.
	Orders, Confirmed, Rejected, Pending int
	// problems holds what is wrong; OK reports whether every order
	// completed consistently.
	problems
}

type orderState struct {
	SKU    string `json:"sku"`
	Qty    int    `json:"qty"`
	Status string `json:"status"`
}

type stockState struct {
	Available int            `json:"available"`
	Reserved  map[string]int `json:"reserved"`
}

// CheckSagasComplete checks the fulfilment saga's work after a fault: every
// acknowledged order leaves "pending" (confirmed or rejected) within
// catchUp, every confirmed order holds exactly its reservation in its
// SKU's inventory, and no rejected order holds one. It is separate from
// Audit so that a test can run it only where the saga's at-least-once
// delivery is expected to hold.
func CheckSagasComplete(ctx context.Context, c *Client, led *Ledger, catchUp time.Duration) (*SagaReport, error) {
	rep := &SagaReport{}
	deadline := time.Now().Add(catchUp)
	bySKU := map[string]map[string]orderState{}
	for _, a := range led.Acks() {
		if a.Aggregate != "order" || a.Command != "place_order" {
			continue
		}
		rep.Orders++
		var st orderState
		for {
			var doc snapshotDoc
			if err := c.GetJSON(ctx, "/order/"+a.ID+"/state", &doc); err != nil {
				return rep, err
			}
			if err := json.Unmarshal(doc.State, &st); err != nil {
				return rep, fmt.Errorf("order %s state %s: %w", a.ID, doc.State, err)
			}
			if st.Status != "pending" || time.Now().After(deadline) {
				break
			}
			select {
			case <-ctx.Done():
				return rep, ctx.Err()
			case <-time.After(50 * time.Millisecond):
			}
		}
		switch st.Status {
		case "confirmed":
			rep.Confirmed++
		case "rejected":
			rep.Rejected++
		case "pending":
			rep.Pending++
			rep.problem("order %s is still pending after %v: the saga lost a step", a.ID, catchUp)
		default:
			rep.problem("order %s has status %q", a.ID, st.Status)
		}
		if bySKU[st.SKU] == nil {
			bySKU[st.SKU] = map[string]orderState{}
		}
		bySKU[st.SKU][a.ID] = st
	}
	for sku, orders := range bySKU {
		var doc snapshotDoc
		if err := c.GetJSON(ctx, "/inventory/"+sku+"/state", &doc); err != nil {
			return rep, err
		}
		var stock stockState
		if err := json.Unmarshal(doc.State, &stock); err != nil {
			return rep, fmt.Errorf("inventory %s state %s: %w", sku, doc.State, err)
		}
		for id, o := range orders {
			held, ok := stock.Reserved[id]
			switch {
			case o.Status == "confirmed" && (!ok || held != o.Qty):
				rep.problem("order %s is confirmed for %d of %s, the inventory holds %d (reserved: %v)", id, o.Qty, sku, held, ok)
			case o.Status == "rejected" && ok:
				rep.problem("order %s is rejected, yet the inventory of %s holds %d for it", id, sku, held)
			}
		}
		if stock.Available < 0 {
			rep.problem("inventory %s has %d available", sku, stock.Available)
		}
	}
	return rep, nil
}
