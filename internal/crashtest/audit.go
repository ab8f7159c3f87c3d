package crashtest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"strconv"
	"sync"
	"time"
)

// AuditConfig configures Audit.
type AuditConfig struct {
	// CatchUp bounds the wait for consumers (the snapshotter) to reach the
	// last version of every aggregate (default 60 s).
	CatchUp time.Duration
	// Explain returns whether a compensation record (an execution, as raw
	// JSON) is explained by the fault the test injected. Nil explains none.
	Explain func(execution json.RawMessage) bool
	// Parallel is the number of concurrent audit requests (default 8).
	Parallel int
}

// Report is what an audit found.
type Report struct {
	// Aggregates is the number of aggregates audited, Streams their
	// streams.
	Aggregates, Streams int
	// Acked is the number of acknowledged requests checked.
	Acked int
	// Lost is the number of acknowledged requests missing (or found at
	// another version than acknowledged).
	Lost int
	// Duplicated is the number of request IDs stored more than once in one
	// aggregate.
	Duplicated int
	// Compensations is the number of compensation records; Unexplained
	// those Explain did not explain.
	Compensations, Unexplained int
	// problems holds what is wrong; OK reports whether the audit found
	// nothing.
	problems
	// Explained holds the first few explained compensation records, for
	// the log.
	Explained []string
}

// problems is what a check found wrong; OK reports there is nothing.
type problems struct {
	// Problems says what is wrong, one line each (at most 50).
	Problems []string
}

// OK reports whether the check found nothing wrong.
func (p *problems) OK() bool { return len(p.Problems) == 0 }

func (p *problems) problem(format string, args ...any) {
	if len(p.Problems) < 50 {
		p.Problems = append(p.Problems, fmt.Sprintf(format, args...))
	}
}

// stream is the part of a stored event stream the audit reads.
type stream struct {
	Version   int    `json:"version"`
	RequestID string `json:"requestId"`
	Events    []struct {
		Name string          `json:"name"`
		Body json.RawMessage `json:"body"`
	} `json:"events"`
}

// maxEventRange is the versions the audit asks for per request (the
// service's default bound).
const maxEventRange = 1000

// Events reads every stream of an aggregate, page by page.
func Events(ctx context.Context, c *Client, k AggregateKey) ([]stream, error) {
	var all []stream
	for from := 1; ; from += maxEventRange {
		var page []stream
		path := fmt.Sprintf("/%s/%s/event/%d/%d", k.Aggregate, k.ID, from, from+maxEventRange-1)
		err := c.GetJSON(ctx, path, &page)
		var se *StatusError
		if errors.As(err, &se) && se.Status == http.StatusNotFound && from == 1 {
			return nil, nil // never created
		}
		if err != nil {
			return nil, err
		}
		all = append(all, page...)
		if len(page) < maxEventRange {
			return all, nil
		}
	}
}

// Audit checks the service's data against the ledger (see the package
// documentation). Transport errors end it with an error; what it finds
// wrong is in the report.
func Audit(ctx context.Context, c *Client, led *Ledger, cfg AuditConfig) (*Report, error) {
	if cfg.CatchUp <= 0 {
		cfg.CatchUp = 60 * time.Second
	}
	if cfg.Parallel <= 0 {
		cfg.Parallel = 8
	}
	rep := &Report{}
	for _, inv := range led.Invalids() {
		rep.problem("unexpected answer during the load: %s", inv)
	}
	acks := map[AggregateKey][]Ack{}
	for _, a := range led.Acks() {
		acks[a.Key()] = append(acks[a.Key()], a)
	}
	keys := led.Touched()
	var (
		mu       sync.Mutex
		firstErr error
		wg       sync.WaitGroup
		sem      = make(chan struct{}, cfg.Parallel)
		existing = map[string]int{}
	)
	for _, k := range keys {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			sub := &Report{}
			n, err := auditAggregate(ctx, c, k, acks[k], cfg, sub)
			mu.Lock()
			defer mu.Unlock()
			if err != nil && firstErr == nil {
				firstErr = fmt.Errorf("audit %s/%s: %w", k.Aggregate, k.ID, err)
			}
			if n > 0 {
				existing[k.Aggregate]++
			}
			rep.Aggregates++
			rep.Streams += n
			rep.Acked += sub.Acked
			rep.Lost += sub.Lost
			rep.Duplicated += sub.Duplicated
			for _, p := range sub.Problems {
				rep.problem("%s", p)
			}
		})
	}
	wg.Wait()
	if firstErr != nil {
		return rep, firstErr
	}
	for agg, n := range existing {
		if err := checkCount(ctx, c, agg, n, rep); err != nil {
			return rep, err
		}
	}
	if err := checkCompensation(ctx, c, cfg, rep); err != nil {
		return rep, err
	}
	return rep, nil
}

// auditAggregate checks one aggregate and returns its number of streams.
func auditAggregate(ctx context.Context, c *Client, k AggregateKey, acks []Ack, cfg AuditConfig, rep *Report) (int, error) {
	streams, err := Events(ctx, c, k)
	if err != nil {
		return 0, err
	}
	byRequest := map[string]int{}
	for i, s := range streams {
		if s.Version != i+1 {
			rep.problem("%s/%s: stream %d has version %d: versions are not contiguous", k.Aggregate, k.ID, i+1, s.Version)
		}
		if v, dup := byRequest[s.RequestID]; dup {
			rep.Duplicated++
			rep.problem("%s/%s: request %s stored twice, at versions %d and %d", k.Aggregate, k.ID, s.RequestID, v, s.Version)
		}
		byRequest[s.RequestID] = s.Version
	}
	for _, a := range acks {
		rep.Acked++
		v, ok := byRequest[a.RequestID]
		switch {
		case !ok:
			rep.Lost++
			rep.problem("%s/%s: acknowledged request %s (version %d) is not in the event log", k.Aggregate, k.ID, a.RequestID, a.Version)
			continue
		case v != a.Version:
			rep.Lost++
			rep.problem("%s/%s: request %s acknowledged as version %d is stored as version %d", k.Aggregate, k.ID, a.RequestID, a.Version, v)
			continue
		}
		var found result
		if err := c.GetJSON(ctx, "/"+k.Aggregate+"/"+k.ID+"/request/"+a.RequestID, &found); err != nil {
			var se *StatusError
			if errors.As(err, &se) && se.Status == http.StatusNotFound {
				rep.Lost++
				rep.problem("%s/%s: lookup of acknowledged request %s: not found", k.Aggregate, k.ID, a.RequestID)
				continue
			}
			return len(streams), err
		}
		if found.AggregateVersion != a.Version {
			rep.Lost++
			rep.problem("%s/%s: lookup of request %s answers version %d, acknowledged %d", k.Aggregate, k.ID, a.RequestID, found.AggregateVersion, a.Version)
		}
	}
	if len(streams) == 0 || k.Aggregate != "cart" {
		return len(streams), nil
	}
	return len(streams), checkCartSnapshot(ctx, c, k, streams, cfg.CatchUp, rep)
}

// foldCart recomputes a cart's items from its events, independently of
// the aggregate's code.
func foldCart(streams []stream) (map[string]int, error) {
	items := map[string]int{}
	for _, s := range streams {
		for _, e := range s.Events {
			var b struct {
				SKU string `json:"sku"`
				Qty int    `json:"qty"`
			}
			if len(e.Body) > 0 {
				if err := json.Unmarshal(e.Body, &b); err != nil {
					return nil, fmt.Errorf("event %s of version %d: %w", e.Name, s.Version, err)
				}
			}
			switch e.Name {
			case "item_added":
				items[b.SKU] += b.Qty
			case "item_removed":
				delete(items, b.SKU)
			case "quantity_changed":
				items[b.SKU] = b.Qty
			case "cart_cleared":
				clear(items)
			default:
				return nil, fmt.Errorf("unknown cart event %q at version %d", e.Name, s.Version)
			}
		}
	}
	return items, nil
}

// snapshotDoc is the part of GET …/snapshot the audit reads.
type snapshotDoc struct {
	Version int             `json:"version"`
	State   json.RawMessage `json:"state"`
}

// checkCartSnapshot waits until the saved snapshot reaches the last
// version and compares its state with the fold of the events.
func checkCartSnapshot(ctx context.Context, c *Client, k AggregateKey, streams []stream, catchUp time.Duration, rep *Report) error {
	want, err := foldCart(streams)
	if err != nil {
		rep.problem("%s/%s: %v", k.Aggregate, k.ID, err)
		return nil
	}
	last := streams[len(streams)-1].Version
	deadline := time.Now().Add(catchUp)
	var snap snapshotDoc
	for {
		err := c.GetJSON(ctx, "/"+k.Aggregate+"/"+k.ID+"/snapshot", &snap)
		var se *StatusError
		if err != nil && !(errors.As(err, &se) && se.Status == http.StatusNotFound) {
			return err
		}
		if err == nil && snap.Version >= last {
			break
		}
		if time.Now().After(deadline) {
			rep.problem("%s/%s: the snapshotter did not catch up within %v: snapshot at version %d, events at %d", k.Aggregate, k.ID, catchUp, snap.Version, last)
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
	if snap.Version != last {
		rep.problem("%s/%s: snapshot at version %d, beyond the last event's %d", k.Aggregate, k.ID, snap.Version, last)
	}
	var got struct {
		Items map[string]int `json:"items"`
	}
	if err := json.Unmarshal(snap.State, &got); err != nil {
		rep.problem("%s/%s: snapshot state %s: %v", k.Aggregate, k.ID, snap.State, err)
		return nil
	}
	if got.Items == nil {
		got.Items = map[string]int{}
	}
	if !maps.Equal(got.Items, want) {
		rep.problem("%s/%s: snapshot state at version %d is %v; the fold of the events is %v", k.Aggregate, k.ID, last, got.Items, want)
	}
	return nil
}

// checkCount compares the snapshot store's count of an aggregate type
// with the aggregates found in the event log (each test runs on its own
// data, so the two must agree).
func checkCount(ctx context.Context, c *Client, aggregate string, want int, rep *Report) error {
	res, err := c.Do(ctx, http.MethodPost, "/"+aggregate+"/snapshot/count", []byte(`{}`))
	if err != nil {
		return err
	}
	if res.Status != http.StatusOK {
		return &StatusError{Path: "/" + aggregate + "/snapshot/count", Status: res.Status, Body: string(res.Body)}
	}
	var got int
	if err := json.Unmarshal(res.Body, &got); err != nil {
		var wrapped struct {
			Count int `json:"count"`
		}
		if json.Unmarshal(res.Body, &wrapped) != nil {
			return fmt.Errorf("snapshot count of %s: %s", aggregate, res.Body)
		}
		got = wrapped.Count
	}
	if got != want {
		rep.problem("snapshot query store counts %d %s aggregates; the event log has %d", got, aggregate, want)
	}
	return nil
}

// checkCompensation reads every compensation record and asks Explain.
func checkCompensation(ctx context.Context, c *Client, cfg AuditConfig, rep *Report) error {
	for page := 1; ; page++ {
		var p struct {
			Total int               `json:"total"`
			List  []json.RawMessage `json:"list"`
		}
		if err := c.GetJSON(ctx, "/compensation/executions?size=100&page="+strconv.Itoa(page), &p); err != nil {
			return err
		}
		for _, e := range p.List {
			rep.Compensations++
			if cfg.Explain == nil || !cfg.Explain(e) {
				rep.Unexplained++
				rep.problem("unexplained compensation record: %.400s", e)
			} else if len(rep.Explained) < 3 {
				rep.Explained = append(rep.Explained, fmt.Sprintf("%.300s", e))
			}
		}
		if len(p.List) == 0 || page*100 >= p.Total {
			return nil
		}
	}
}
