package soak

import (
	"bufio"
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/factum-go/factum/internal/crashtest"
)

// Counts are the operations a Mix ran, by kind, and their failures.
type Counts struct {
	mu     sync.Mutex
	ops    map[string]int
	failed map[string]int
	// examples holds a few failures, for the log.
	examples []string
}

func newCounts() *Counts { return &Counts{ops: map[string]int{}, failed: map[string]int{}} }

func (c *Counts) add(kind string, err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.ops[kind]++
	if err != nil {
		c.failed[kind]++
		if len(c.examples) < 10 {
			c.examples = append(c.examples, kind+": "+err.Error())
		}
	}
}

// Snapshot returns copies of the operation and failure counts and the
// example failures.
func (c *Counts) Snapshot() (ops, failed map[string]int, examples []string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	ops, failed = map[string]int{}, map[string]int{}
	for k, v := range c.ops {
		ops[k] = v
	}
	for k, v := range c.failed {
		failed[k] = v
	}
	return ops, failed, append([]string(nil), c.examples...)
}

// Total is the number of operations run.
func (c *Counts) Total() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for _, v := range c.ops {
		n += v
	}
	return n
}

// op is one kind of request of the mix; it returns an error for an
// answer the mix does not expect.
type op struct {
	kind string
	run  func(ctx context.Context, m *mixer, rng *rand.Rand) error
}

type mixer struct {
	c    *crashtest.Client
	seq  atomic.Int64
	skus []string
}

func (m *mixer) next() int64 { return m.seq.Add(1) }

func expect(res crashtest.Response, err error, statuses ...int) error {
	if err != nil {
		return err
	}
	for _, s := range statuses {
		if res.Status == s {
			return nil
		}
	}
	return fmt.Errorf("HTTP %d %.200s", res.Status, res.Body)
}

func (m *mixer) cart(rng *rand.Rand) string { return fmt.Sprintf("soak-%d", rng.IntN(200)) }

func (m *mixer) command(ctx context.Context, rng *rand.Rand, stage string, extra ...string) (crashtest.Response, error) {
	body := fmt.Sprintf(`{"sku":"sku-%d","qty":1}`, rng.IntN(20))
	h := append([]string{"Command-Request-Id", fmt.Sprintf("soak-%d", m.next()), "Command-Wait-Stage", stage}, extra...)
	return m.c.Do(ctx, http.MethodPost, "/cart/"+m.cart(rng)+"/add_item", []byte(body), h...)
}

// ops is the mix; each is drawn with equal probability.
var ops = append(awaitedCommands("SENT", "PROCESSED", "SNAPSHOT", "PROJECTED", "EVENT_HANDLED"), []op{
	{"order/SAGA_HANDLED", func(ctx context.Context, m *mixer, rng *rand.Rand) error {
		body := fmt.Sprintf(`{"sku":%q,"qty":1}`, m.skus[rng.IntN(len(m.skus))])
		res, err := m.c.Do(ctx, http.MethodPost, fmt.Sprintf("/order/soak-o-%d/place_order", m.next()), []byte(body), "Command-Wait-Stage", "SAGA_HANDLED")
		return expect(res, err, 200)
	}},
	{"command/timeout", func(ctx context.Context, m *mixer, rng *rand.Rand) error {
		res, err := m.command(ctx, rng, "SNAPSHOT", "Command-Wait-Timeout", "1ms")
		return expect(res, err, 200, 408, 409)
	}},
	{"command/idempotent", func(ctx context.Context, m *mixer, rng *rand.Rand) error {
		key := fmt.Sprintf("soak-key-%d", m.next())
		body := fmt.Sprintf(`{"sku":"sku-%d","qty":1}`, rng.IntN(20))
		path := "/cart/" + m.cart(rng) + "/add_item"
		first, err := m.c.Do(ctx, http.MethodPost, path, []byte(body), "Idempotency-Key", key)
		if err := expect(first, err, 200, 409); err != nil {
			return err
		}
		again, err := m.c.Do(ctx, http.MethodPost, path, []byte(body), "Idempotency-Key", key)
		if err := expect(again, err, first.Status); err != nil {
			return err
		}
		if again.Header.Get("Idempotent-Replayed") != "true" {
			return fmt.Errorf("idempotent retry not replayed: %d %s", again.Status, again.Body)
		}
		return nil
	}},
	{"sse/full", func(ctx context.Context, m *mixer, rng *rand.Rand) error {
		return m.sse(ctx, rng, false)
	}},
	{"sse/abandoned", func(ctx context.Context, m *mixer, rng *rand.Rand) error {
		return m.sse(ctx, rng, true)
	}},
	{"query/state", func(ctx context.Context, m *mixer, rng *rand.Rand) error {
		res, err := m.c.Do(ctx, http.MethodGet, "/cart/"+m.cart(rng)+"/state", nil)
		return expect(res, err, 200, 404)
	}},
	{"query/list", func(ctx context.Context, m *mixer, rng *rand.Rand) error {
		q := fmt.Sprintf(`{"condition":{"operator":"AND","children":[{"field":"version","operator":"GTE","value":%d},{"operator":"DELETED","value":"ACTIVE"}]},"sort":[{"field":"version","direction":"DESC"}],"limit":10}`, rng.IntN(20))
		res, err := m.c.Do(ctx, http.MethodPost, "/cart/snapshot/list", []byte(q))
		return expect(res, err, 200)
	}},
	{"query/count", func(ctx context.Context, m *mixer, rng *rand.Rand) error {
		res, err := m.c.Do(ctx, http.MethodPost, "/cart/snapshot/count", []byte(`{}`))
		return expect(res, err, 200)
	}},
	{"lookup", func(ctx context.Context, m *mixer, rng *rand.Rand) error {
		res, err := m.c.Do(ctx, http.MethodGet, fmt.Sprintf("/cart/%s/request/soak-%d", m.cart(rng), rng.Int64N(m.seq.Load()+1)), nil)
		return expect(res, err, 200, 404)
	}},
}...)

// awaitedCommands are the ops "command/STAGE" of stages: a cart command
// awaited to that stage, which succeeds or conflicts.
func awaitedCommands(stages ...string) []op {
	out := make([]op, len(stages))
	for i, stage := range stages {
		out[i] = op{"command/" + stage, func(ctx context.Context, m *mixer, rng *rand.Rand) error {
			res, err := m.command(ctx, rng, stage)
			return expect(res, err, 200, 409)
		}}
	}
	return out
}

// sse sends a command with Accept: text/event-stream waiting for SNAPSHOT
// and reads the stream to its end, or, abandoned, hangs up after the first
// event.
func (m *mixer) sse(ctx context.Context, rng *rand.Rand, abandon bool) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	body := fmt.Sprintf(`{"sku":"sku-%d","qty":1}`, rng.IntN(20))
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, m.c.Base()+"/cart/"+m.cart(rng)+"/add_item", strings.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Command-Wait-Stage", "SNAPSHOT")
	res, err := m.c.HTTP().Do(req)
	if err != nil {
		return err
	}
	defer res.Body.Close()
	if res.StatusCode == http.StatusConflict {
		return nil // a business refusal before the stream
	}
	if res.StatusCode != http.StatusOK {
		return fmt.Errorf("SSE: HTTP %d", res.StatusCode)
	}
	sc := bufio.NewScanner(res.Body)
	events := 0
	for sc.Scan() {
		if strings.HasPrefix(sc.Text(), "event: ") {
			events++
			if abandon {
				return nil
			}
		}
	}
	if err := sc.Err(); err != nil {
		return err
	}
	if events == 0 {
		return fmt.Errorf("SSE stream without events")
	}
	return nil
}

// Mix runs the mix on workers goroutines until ctx ends and returns the
// counts. skus are inventories with stock for the orders.
func Mix(ctx context.Context, c *crashtest.Client, workers int, seed uint64, skus []string) *Counts {
	counts := newCounts()
	m := &mixer{c: c, skus: skus}
	var wg sync.WaitGroup
	for w := range workers {
		rng := rand.New(rand.NewPCG(seed, uint64(w)))
		wg.Go(func() {
			for ctx.Err() == nil {
				o := ops[rng.IntN(len(ops))]
				err := o.run(ctx, m, rng)
				if ctx.Err() != nil {
					return // the end of the run, not a failure
				}
				counts.add(o.kind, err)
			}
		})
	}
	wg.Wait()
	return counts
}
