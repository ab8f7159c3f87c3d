package clustertest_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/internal/crashtest"
	"github.com/jackc/pgx/v5"
)

// checkpoints watches the consumer groups' checkpoints in the database
// throughout a test: a group's checkpoint that moves backwards (a new
// holder of its lease starting behind what the old one saved) would make
// it handle streams again.
type checkpoints struct {
	stop chan struct{}
	done chan struct{}

	mu    sync.Mutex
	last  map[string]factum.Position // by processor/name
	moves map[string]int
	errs  []string
}

// watchCheckpoints polls the context's checkpoint table of the schema in
// url until stop.
func watchCheckpoints(url, boundedContext string) *checkpoints {
	cp := &checkpoints{stop: make(chan struct{}), done: make(chan struct{}), last: map[string]factum.Position{}, moves: map[string]int{}}
	go func() {
		defer close(cp.done)
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		go func() {
			<-cp.stop
			cancel()
		}()
		var conn *pgx.Conn
		defer func() {
			if conn != nil {
				_ = conn.Close(context.Background())
			}
		}()
		for ctx.Err() == nil {
			if conn == nil {
				c, err := pgx.Connect(ctx, url)
				if err != nil {
					time.Sleep(100 * time.Millisecond)
					continue
				}
				conn = c
			}
			cp.poll(ctx, conn, boundedContext)
			select {
			case <-ctx.Done():
			case <-time.After(20 * time.Millisecond):
			}
		}
	}()
	return cp
}

func (cp *checkpoints) poll(ctx context.Context, conn *pgx.Conn, boundedContext string) {
	rows, err := conn.Query(ctx, "SELECT processor, name, tx, seq FROM factum_"+boundedContext+"_checkpoints")
	if err != nil {
		return // not made yet
	}
	defer rows.Close()
	cp.mu.Lock()
	defer cp.mu.Unlock()
	for rows.Next() {
		var proc, name string
		var tx, seq int64
		if rows.Scan(&proc, &name, &tx, &seq) != nil {
			return
		}
		k := proc + "/" + name
		pos := factum.Position{Tx: uint64(tx), Seq: uint64(seq)}
		if prev, ok := cp.last[k]; ok {
			if pos.Less(prev) {
				cp.errs = append(cp.errs, fmt.Sprintf("checkpoint of %s moved backwards: %v after %v", k, pos, prev))
			}
			if pos != prev {
				cp.moves[k]++
			}
		}
		cp.last[k] = pos
	}
}

// end stops the watch and returns what it found wrong and the groups'
// checkpoint moves.
func (cp *checkpoints) end() ([]string, map[string]int) {
	close(cp.stop)
	<-cp.done
	cp.mu.Lock()
	defer cp.mu.Unlock()
	return cp.errs, cp.moves
}

// sagaOnce checks the fulfilment saga's effects for doubles: every
// acknowledged order holds exactly one decision (confirmed or rejected)
// in its own log, and no inventory's log holds two reservations or
// refusals for one order. It returns the problems.
func sagaOnce(ctx context.Context, c *crashtest.Client, led *crashtest.Ledger, skus []string) ([]string, error) {
	var problems []string
	for _, a := range led.Acks() {
		if a.Aggregate != "order" || a.Command != "place_order" {
			continue
		}
		streams, err := crashtest.Events(ctx, c, a.Key())
		if err != nil {
			return problems, err
		}
		decisions := 0
		for _, s := range streams {
			for _, e := range s.Events {
				if strings.Contains(e.Name, "confirmed") || strings.Contains(e.Name, "rejected") {
					decisions++
				}
			}
		}
		if decisions != 1 {
			problems = append(problems, fmt.Sprintf("order %s holds %d decisions, want 1", a.ID, decisions))
		}
	}
	for _, sku := range skus {
		streams, err := crashtest.Events(ctx, c, crashtest.AggregateKey{Aggregate: "inventory", ID: sku})
		if err != nil {
			return problems, err
		}
		byOrder := map[string]int{}
		for _, s := range streams {
			for _, e := range s.Events {
				var body struct {
					OrderID string `json:"orderId"`
				}
				if json.Unmarshal(e.Body, &body) == nil && body.OrderID != "" {
					byOrder[body.OrderID]++
				}
			}
		}
		for id, n := range byOrder {
			if n > 1 {
				problems = append(problems, fmt.Sprintf("inventory %s holds %d reservations or refusals for order %s, want 1", sku, n, id))
			}
		}
	}
	return problems, nil
}
