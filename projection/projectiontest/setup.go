package projectiontest

import (
	"context"
	"log/slog"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/factum-go/factum/projection"
)

// Runners of one projection starting at once on a fresh read model, as the
// instances of a cluster do when they start together, set its tables up
// one after another: none fails its set-up. (PostgreSQL's CREATE TABLE IF
// NOT EXISTS and CREATE INDEX IF NOT EXISTS fail on a unique index of its
// catalog when another transaction creates the same table at the same
// moment.)
func concurrentSetUps(t *testing.T, st projection.Store) {
	const runners = 8
	log, want, _ := appendLog(t, 40, 5)
	c := newCounts()
	// The set-ups start their statements together: a set-up waits at the
	// gate until every runner has reached its set-up, or for half a
	// second when they do not (they run one after another), whichever
	// comes first; the gate then stays open.
	var entered atomic.Int32
	gate := make(chan struct{})
	var opened sync.Once
	open := func() { opened.Do(func() { close(gate) }) }
	p := c.projection(t, projection.Setup(func(ctx context.Context, tx projection.Tx) error {
		if entered.Add(1) >= runners {
			open()
		}
		select {
		case <-gate:
		case <-time.After(500 * time.Millisecond):
			open()
		case <-ctx.Done():
			return ctx.Err()
		}
		for _, q := range []string{
			`CREATE TABLE IF NOT EXISTS ` + c.table + ` (aggregate_id TEXT PRIMARY KEY, n INTEGER NOT NULL)`,
			`CREATE INDEX IF NOT EXISTS ` + c.table + `_n ON ` + c.table + ` (n)`,
		} {
			if _, err := tx.Exec(ctx, q); err != nil {
				return err
			}
			// The other runners reach their set-up while this one's
			// transaction is open, as they do when the database is slow.
			time.Sleep(20 * time.Millisecond)
		}
		return nil
	}))
	var errs errorLog
	start := make(chan struct{})
	var wg sync.WaitGroup
	for range runners {
		r := newRunner(t, p, projection.Config{Log: log, Store: st, BatchSize: 8, Logger: slog.New(&errs)})
		wg.Go(func() {
			<-start
			drain(t, r)
		})
	}
	close(start)
	wg.Wait()
	if n, first := errs.seen(); n != 0 {
		t.Errorf("%d runner errors; the first: %s", n, first)
	}
	c.expect(t, st, want)
}

// errorLog is a slog handler that counts the records of level Error and
// keeps the first one's text.
type errorLog struct {
	mu    sync.Mutex
	n     int
	first string
}

func (h *errorLog) Enabled(_ context.Context, l slog.Level) bool { return l >= slog.LevelError }

func (h *errorLog) Handle(_ context.Context, r slog.Record) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.n == 0 {
		h.first = r.Message
		r.Attrs(func(a slog.Attr) bool {
			h.first += " " + a.String()
			return true
		})
	}
	h.n++
	return nil
}

func (h *errorLog) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h *errorLog) WithGroup(string) slog.Handler      { return h }

func (h *errorLog) seen() (int, string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.n, h.first
}
