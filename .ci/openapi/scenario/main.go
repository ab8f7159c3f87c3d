// Command scenario drives a live factum serve with the Go client that
// oapi-codegen generates from its /openapi.json (into ./client, by
// .ci/openapi/check.sh): send and wait, a typed 409, a query, a lookup.
// It exits non-zero, saying what differed, when the service or the
// document is wrong.
package main

import (
	"context"
	"fmt"
	"os"
	"time"

	"scenario/client"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: scenario URL")
		os.Exit(2)
	}
	if err := run(os.Args[1]); err != nil {
		fmt.Fprintln(os.Stderr, "scenario:", err)
		os.Exit(1)
	}
	fmt.Println("scenario: ok")
}

func run(url string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := client.NewClientWithResponses(url)
	if err != nil {
		return err
	}
	cart := fmt.Sprintf("scenario-%d", time.Now().UnixNano())
	req := cart + "-req-1"
	stage := client.CommandWaitStage(client.SNAPSHOT)

	// Send and wait for the snapshot.
	sent, err := c.CartAddItemWithResponse(ctx, cart, &client.CartAddItemParams{CommandRequestId: &req, CommandWaitStage: &stage},
		client.AddItem{Sku: "sku-1", Qty: 2})
	if err != nil {
		return fmt.Errorf("add_item: %w", err)
	}
	if sent.JSON200 == nil || sent.JSON200.AggregateVersion == nil || *sent.JSON200.AggregateVersion != 1 || sent.JSON200.Stage != client.SNAPSHOT {
		return fmt.Errorf("add_item: HTTP %d %s", sent.StatusCode(), sent.Body)
	}

	// A stale expected version is a typed 409.
	stale := 7
	conflict, err := c.CartAddItemWithResponse(ctx, cart, &client.CartAddItemParams{CommandAggregateVersion: &stale},
		client.AddItem{Sku: "sku-2", Qty: 1})
	if err != nil {
		return fmt.Errorf("stale add_item: %w", err)
	}
	if conflict.JSON409 == nil || conflict.JSON409.Code != client.FactumCodeCommandExpectVersionConflict {
		return fmt.Errorf("stale add_item: want a 409 CommandExpectVersionConflict, got HTTP %d %s", conflict.StatusCode(), conflict.Body)
	}

	// Query the snapshots.
	var ids client.QueryCondition_Value
	if err := ids.FromQueryConditionValue3([]client.QueryCondition_Value_3_Item{item(cart)}); err != nil {
		return err
	}
	list, err := c.CartQueryListWithResponse(ctx, client.QueryQuery{Condition: &client.QueryCondition{Operator: client.AGGREGATEIDS, Value: &ids}})
	if err != nil {
		return fmt.Errorf("query: %w", err)
	}
	if list.JSON200 == nil || len(*list.JSON200) != 1 {
		return fmt.Errorf("query: HTTP %d %s", list.StatusCode(), list.Body)
	}
	got := (*list.JSON200)[0]
	if got.AggregateId.Id != cart || got.Version != 1 || got.State.Items == nil || (*got.State.Items)["sku-1"] != 2 {
		return fmt.Errorf("query: %s", list.Body)
	}

	// Look the request up.
	found, err := c.CartLookupRequestWithResponse(ctx, cart, req)
	if err != nil {
		return fmt.Errorf("lookup: %w", err)
	}
	if found.JSON200 == nil || found.JSON200.RequestId != req || *found.JSON200.AggregateVersion != 1 {
		return fmt.Errorf("lookup: HTTP %d %s", found.StatusCode(), found.Body)
	}
	missing, err := c.CartLookupRequestWithResponse(ctx, cart, cart+"-never-sent")
	if err != nil {
		return fmt.Errorf("lookup: %w", err)
	}
	if missing.JSON404 == nil || missing.JSON404.Code != client.FactumCodeNotFound {
		return fmt.Errorf("lookup of an unknown request: HTTP %d %s", missing.StatusCode(), missing.Body)
	}
	return nil
}

func item(s string) client.QueryCondition_Value_3_Item {
	var v client.QueryCondition_Value_3_Item
	_ = v.FromQueryConditionValue30(s)
	return v
}
