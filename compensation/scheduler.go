package compensation

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/query"
)

// SchedulerConfig configures a Scheduler. Zero fields take the defaults.
type SchedulerConfig struct {
	// Period is the pause between passes when a pass found less than a
	// full batch (default 10 s).
	Period time.Duration
	// BatchSize bounds the executions one pass takes (default 100, at
	// most query.DefaultMaxListSize).
	BatchSize int
	// Concurrency bounds the retries one scheduler runs at once
	// (default 4).
	Concurrency int
	// Logger receives retry errors (default the compensation's).
	Logger *slog.Logger
}

// Scheduler retries due executions. Each pass finds them with a snapshot
// query (retryable, and FAILED with the next retry due or PREPARED past
// its timeout), prepares each with the version it saw as the expected
// version, re-delivers its event to its function, and records the
// outcome.
//
// Several schedulers, in one process or many over one event store, never
// run the same retry at once. A prepare is an append of the execution's
// next version, decided by the execution aggregate itself: it is sent with
// the version the scheduler saw as the expected version, and the
// aggregate refuses an execution another retry holds (PREPARED before its
// timeout). Of two schedulers preparing the same execution, exactly one
// append succeeds — the event store's atomic append decides, not a check
// in Go — and the other is refused (CommandExpectVersionConflict or
// IllegalState) and skips it. The winner holds the execution until the
// execution timeout, which also bounds the function's run; a retry still
// PREPARED after it (its scheduler died) is due again. A snapshot that
// lags the log can only cause such a refusal, never a second holder.
//
// Snapshots that lag behind the scheduler's own work would have it send
// prepares bound to be refused, pass after pass: it remembers the latest
// version each of its retries learned of, and passes over a due snapshot
// older than that without a round trip (Report.Stale), until the
// snapshot catches up.
type Scheduler struct {
	c   *Compensation
	cfg SchedulerConfig

	prepared, succeeded, failed, skipped, stale, errs atomic.Int64

	mu    sync.Mutex
	ahead map[string]int // execution ID -> a version the snapshots lag behind
}

// NewScheduler returns a scheduler of the compensation's executions. It
// needs the compensation bound (see Bind) before it runs.
func (c *Compensation) NewScheduler(cfg SchedulerConfig) *Scheduler {
	if cfg.Period <= 0 {
		cfg.Period = 10 * time.Second
	}
	if cfg.BatchSize <= 0 {
		cfg.BatchSize = 100
	}
	cfg.BatchSize = min(cfg.BatchSize, query.DefaultMaxListSize)
	if cfg.Concurrency <= 0 {
		cfg.Concurrency = 4
	}
	if cfg.Logger == nil {
		cfg.Logger = c.log
	}
	return &Scheduler{c: c, cfg: cfg, ahead: map[string]int{}}
}

// Report is what one pass did.
type Report struct {
	// Due is how many due executions the pass found, stale ones included.
	Due int
	// Stale counts the due snapshots older than a version this scheduler
	// already saw: passed over, since a prepare would be refused.
	Stale int
	// Attempts lists each execution's retry, in no particular order.
	Attempts []Attempt
	// Succeeded, Failed and Skipped count the attempts by outcome.
	Succeeded, Failed, Skipped int
	// Errors counts the retries whose outcome could not be recorded (the
	// execution stays PREPARED until its timeout) or whose prepare failed
	// for another reason than a lost race.
	Errors int
}

// Stats are a scheduler's running totals since it was made: the metrics
// hook for retries.
type Stats struct {
	// Prepared counts the retries this scheduler took.
	Prepared int64
	// Succeeded and Failed count their outcomes.
	Succeeded, Failed int64
	// Skipped counts executions another scheduler took first, or that
	// were no longer due.
	Skipped int64
	// Stale counts due snapshots passed over because they lag behind a
	// version this scheduler saw.
	Stale int64
	// Errors counts the retries that ended in an error.
	Errors int64
}

// Stats returns the running totals.
func (s *Scheduler) Stats() Stats {
	return Stats{Prepared: s.prepared.Load(), Succeeded: s.succeeded.Load(), Failed: s.failed.Load(),
		Skipped: s.skipped.Load(), Stale: s.stale.Load(), Errors: s.errs.Load()}
}

// Run runs passes until ctx ends, then returns nil after the pass in hand.
// A pass that found a full batch and took some of it is followed at once
// by the next one; otherwise the next pass starts after Period.
func (s *Scheduler) Run(ctx context.Context) error {
	for ctx.Err() == nil {
		rep, err := s.RunOnce(ctx)
		if err != nil && ctx.Err() == nil {
			s.cfg.Logger.Error("compensation: scheduler pass", "aggregate", s.c.named.String(), "err", err)
		}
		if err == nil && len(rep.Attempts) >= s.cfg.BatchSize && rep.Skipped < len(rep.Attempts) {
			// More may be due. A pass that only skipped (snapshots lag
			// behind other schedulers' work) waits instead of spinning.
			continue
		}
		t := time.NewTimer(s.cfg.Period)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
		}
	}
	return nil
}

// dueCondition selects the executions due at now.
func dueCondition(now time.Time) query.Condition {
	return query.And(query.True("state.retryable"), query.Lte("state.dueAt", TimeOf(now).Millis()))
}

// Due returns up to limit executions whose snapshots are due now,
// earliest first: what the next pass starts from (limit 0 means the
// query guards' default list size).
func (s *Scheduler) Due(ctx context.Context, limit int) ([]Item, error) {
	snaps, err := s.c.queries.List(ctx, query.Query{
		Condition: dueCondition(s.c.now()),
		Sort:      []query.Sort{query.SortAsc("state.dueAt")},
		Limit:     limit,
	})
	if err != nil {
		return nil, fmt.Errorf("compensation: find due executions: %w", err)
	}
	out := make([]Item, len(snaps))
	for i := range snaps {
		if out[i], err = itemOf(snaps[i]); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// RunOnce runs one pass: it retries up to BatchSize due executions, at most
// Concurrency at a time, and reports what happened. It returns an error
// only when the compensation is not bound or the due executions cannot be
// found; each retry's own error is in its Attempt and logged.
func (s *Scheduler) RunOnce(ctx context.Context) (Report, error) {
	b, err := s.c.runtime()
	if err != nil {
		return Report{}, err
	}
	due, err := s.Due(ctx, min(s.cfg.BatchSize+s.aheadCount(), query.DefaultMaxListSize))
	if err != nil {
		return Report{}, err
	}
	rep := Report{Due: len(due)}
	due = s.fresh(due)
	rep.Stale = rep.Due - len(due)
	s.stale.Add(int64(rep.Stale))
	rep.Attempts = make([]Attempt, 0, len(due))
	var mu sync.Mutex
	var wg sync.WaitGroup
	sem := make(chan struct{}, s.cfg.Concurrency)
	for _, it := range due {
		select {
		case sem <- struct{}{}:
		case <-ctx.Done():
		}
		if ctx.Err() != nil {
			break
		}
		wg.Go(func() {
			defer func() { <-sem }()
			a, err := s.c.retry(ctx, b, it, false)
			mu.Lock()
			defer mu.Unlock()
			s.count(&rep, a, err)
		})
	}
	wg.Wait()
	return rep, nil
}

func (s *Scheduler) aheadCount() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.ahead)
}

// fresh drops the due executions whose snapshot is older than a version
// this scheduler saw, and returns at most BatchSize of the rest. It
// forgets an execution once its snapshot caught up, or once it is no
// longer due (then its snapshot caught up, or it would still be listed).
func (s *Scheduler) fresh(due []Item) []Item {
	s.mu.Lock()
	defer s.mu.Unlock()
	listed := make(map[string]bool, len(due))
	out := due[:0]
	for _, it := range due {
		listed[it.ID.ID] = true
		if v, ok := s.ahead[it.ID.ID]; ok {
			if it.Version < v {
				continue
			}
			delete(s.ahead, it.ID.ID)
		}
		if len(out) < s.cfg.BatchSize {
			out = append(out, it)
		}
	}
	for id := range s.ahead {
		if !listed[id] {
			delete(s.ahead, id)
		}
	}
	return out
}

// count adds one retry to the report and the totals.
func (s *Scheduler) count(rep *Report, a Attempt, err error) {
	rep.Attempts = append(rep.Attempts, a)
	if a.Version > 0 {
		s.mu.Lock()
		s.ahead[a.ID.ID] = max(s.ahead[a.ID.ID], a.Version)
		s.mu.Unlock()
	}
	if a.Attempt > 0 {
		s.prepared.Add(1)
	}
	switch {
	case a.Outcome == OutcomeSkipped && (errors.Is(err, factum.ErrCommandExpectVersionConflict) || errors.Is(err, factum.ErrIllegalState)):
		rep.Skipped++
		s.skipped.Add(1)
		return
	case err != nil:
		rep.Errors++
		s.errs.Add(1)
		s.cfg.Logger.Error("compensation: retry", "execution", a.ID.String(), "attempt", a.Attempt, "err", err)
		return
	}
	switch a.Outcome {
	case OutcomeSucceeded:
		rep.Succeeded++
		s.succeeded.Add(1)
	case OutcomeFailed:
		rep.Failed++
		s.failed.Add(1)
	}
}
