package crashtest

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"sync"
	"sync/atomic"
	"time"
)

// The service's command headers this harness uses.
const (
	headerRequestID = "Command-Request-Id"
	headerWaitStage = "Command-Wait-Stage"
)

// LoadConfig configures Load.
type LoadConfig struct {
	// Seed makes the load's choices (aggregates, commands) repeatable.
	Seed uint64
	// Workers is the number of concurrent clients (default 16).
	Workers int
	// Carts is the number of cart aggregates written to (default 48).
	Carts int
	// CartPrefix names the carts (default "cart"): rounds sharing it grow
	// the same aggregates across restarts.
	CartPrefix string
	// Round distinguishes request IDs of different rounds; required to be
	// unique per round of one ledger.
	Round int
	// OrderEvery, when above 0, makes every OrderEvery-th command an order
	// (a saga: the order reserves stock of one of SKUs' inventories).
	OrderEvery int
	// SKUs are the inventory aggregates orders reserve from (Setup
	// restocks them).
	SKUs []string
}

func (c *LoadConfig) defaults() {
	if c.Workers <= 0 {
		c.Workers = 16
	}
	if c.Carts <= 0 {
		c.Carts = 48
	}
	if c.CartPrefix == "" {
		c.CartPrefix = "cart"
	}
}

// cartSKUs is how many catalog items the carts use: with qty 1 per
// add_item a cart takes 20×99 adds before its limits refuse more.
const cartSKUs = 20

// Load sends commands on cfg.Workers clients until ctx ends, recording
// every outcome in led. It returns how many requests it sent.
func Load(ctx context.Context, c *Client, led *Ledger, cfg LoadConfig) int {
	cfg.defaults()
	var sent atomic.Int64
	var wg sync.WaitGroup
	for w := range cfg.Workers {
		rng := rand.New(rand.NewPCG(cfg.Seed, uint64(w)))
		wg.Go(func() {
			for n := 0; ctx.Err() == nil; n++ {
				req := nextRequest(rng, cfg, w, n)
				o := Send(ctx, c, led, req)
				sent.Add(1)
				if o == OutcomeUnknown {
					// The service is down or overloaded: back off as a
					// client does, rather than spin.
					select {
					case <-ctx.Done():
					case <-time.After(50 * time.Millisecond):
					}
				}
			}
		})
	}
	wg.Wait()
	return int(sent.Load())
}

func nextRequest(rng *rand.Rand, cfg LoadConfig, worker, n int) Request {
	rid := fmt.Sprintf("r%d-w%d-%d", cfg.Round, worker, n)
	if cfg.OrderEvery > 0 && len(cfg.SKUs) > 0 && rng.IntN(cfg.OrderEvery) == 0 {
		body, _ := json.Marshal(map[string]any{"sku": cfg.SKUs[rng.IntN(len(cfg.SKUs))], "qty": 1 + rng.IntN(3)})
		return Request{Aggregate: "order", ID: "o-" + rid, Command: "place_order", RequestID: rid, Body: body}
	}
	cart := fmt.Sprintf("%s-%d", cfg.CartPrefix, rng.IntN(cfg.Carts))
	sku := fmt.Sprintf("sku-%d", rng.IntN(cartSKUs))
	if rng.IntN(10) == 0 {
		body, _ := json.Marshal(map[string]any{"sku": sku})
		return Request{Aggregate: "cart", ID: cart, Command: "remove_item", RequestID: rid, Body: body}
	}
	body, _ := json.Marshal(map[string]any{"sku": sku, "qty": 1})
	return Request{Aggregate: "cart", ID: cart, Command: "add_item", RequestID: rid, Body: body}
}

// Outcome is how one request ended for the client.
type Outcome int

// The outcomes of Send.
const (
	// OutcomeUnknown: no answer, a 5xx, a timeout or back-pressure: the
	// request may or may not have been appended.
	OutcomeUnknown Outcome = iota
	// OutcomeAcked: 200 Ok with a version.
	OutcomeAcked
	// OutcomeRejected: a business refusal (409 IllegalState, or 404 for
	// a command to a cart not created yet), nothing appended.
	OutcomeRejected
	// OutcomeInvalid: any other answer, which the load never provokes: the
	// harness counts it as an audit problem.
	OutcomeInvalid
)

// result is the part of a command result the harness reads.
type result struct {
	Stage            string `json:"stage"`
	RequestID        string `json:"requestId"`
	AggregateVersion int    `json:"aggregateVersion"`
	Code             string `json:"errorCode"`
	Duplicate        bool   `json:"duplicate"`
}

type errorBody struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

// Send sends one request (waiting for PROCESSED) and records its outcome.
func Send(ctx context.Context, c *Client, led *Ledger, req Request) Outcome {
	path := "/" + req.Aggregate + "/" + req.ID + "/" + req.Command
	res, err := c.Do(ctx, http.MethodPost, path, req.Body, headerRequestID, req.RequestID, headerWaitStage, "PROCESSED")
	if err != nil {
		led.Unknown(req)
		return OutcomeUnknown
	}
	switch {
	case res.Status == http.StatusOK:
		var r result
		if json.Unmarshal(res.Body, &r) != nil || r.Code != "Ok" || r.AggregateVersion < 1 || r.RequestID != req.RequestID {
			led.Invalid(req, res)
			return OutcomeInvalid
		}
		led.Acked(req, r.AggregateVersion)
		return OutcomeAcked
	case res.Status == http.StatusConflict, res.Status == http.StatusNotFound:
		// A business rule refused it, or it is not a create command and
		// the aggregate does not exist yet (remove_item on a new cart).
		var e errorBody
		if json.Unmarshal(res.Body, &e) == nil && (e.Code == "IllegalState" || e.Code == "NotFound" && req.Command != "add_item" && req.Command != "place_order") {
			led.Rejected(req)
			return OutcomeRejected
		}
	case res.Status >= 500, res.Status == http.StatusRequestTimeout, res.Status == http.StatusTooManyRequests:
		led.Unknown(req)
		return OutcomeUnknown
	}
	led.Invalid(req, res)
	return OutcomeInvalid
}

// Settle resends every request of unknown outcome with its request ID, as
// a client does after a failure, until each is acknowledged or rejected
// (or ctx ends). It returns how many it settled.
func Settle(ctx context.Context, c *Client, led *Ledger) int {
	n := 0
	for _, req := range led.Unknowns() {
		for ctx.Err() == nil {
			if o := Send(ctx, c, led, req); o != OutcomeUnknown {
				n++
				break
			}
			select {
			case <-ctx.Done():
			case <-time.After(20 * time.Millisecond):
			}
		}
	}
	return n
}
