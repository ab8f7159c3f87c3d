package projection_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/event"
	"github.com/factum-go/factum/eventstore"
	"github.com/factum-go/factum/projection"
)

// runToTheEnd runs a runner of p with cfg, draining: to the end of the
// log, within a minute. It returns the failures the runner recorded and
// whether it reached the end of the log.
func runToTheEnd(t *testing.T, p *projection.Projection, cfg projection.Config) (recorded []event.Failure, finished bool) {
	t.Helper()
	cfg.Failures = event.FailureRecorderFunc(func(_ context.Context, f event.Failure) error {
		recorded = append(recorded, f)
		return nil
	})
	r, err := projection.NewRunner(p, cfg)
	if err != nil {
		t.Fatal(err)
	}
	r.Drain()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := r.Run(ctx); err != nil {
		t.Fatal(err)
	}
	return recorded, ctx.Err() == nil
}

// A stream's failure names the event the function's error names (an
// *event.EventError, as the event consumer honours it, wrapped or not),
// and the first event the projection consumes when the error names none
// or names an event that is not the stream's: a failure charged to
// another stream's event (or to an ID that is no event's) would be
// recorded against an execution of that event, or not at all, and a
// runner whose failure cannot be recorded never moves past the stream.
func TestAFailureNamesTheEventItsErrorNames(t *testing.T) {
	for _, tc := range []struct {
		name  string
		blame func(s *factum.EventStream) error
		want  func(s *factum.EventStream) string
	}{
		{"named", func(s *factum.EventStream) error {
			return &event.EventError{EventID: s.Events[1].ID, Err: factum.IllegalState("the second event")}
		}, func(s *factum.EventStream) string { return s.Events[1].ID }},
		{"wrapped", func(s *factum.EventStream) error {
			return fmt.Errorf("projecting: %w", &event.EventError{EventID: s.Events[1].ID, Err: factum.IllegalState("the second event")})
		}, func(s *factum.EventStream) string { return s.Events[1].ID }},
		{"empty", func(*factum.EventStream) error {
			return &event.EventError{Err: factum.IllegalState("no event")}
		}, func(s *factum.EventStream) string { return s.Events[0].ID }},
		{"foreign", func(*factum.EventStream) error {
			return &event.EventError{EventID: factum.NewID(), Err: factum.IllegalState("another stream's event")}
		}, func(s *factum.EventStream) string { return s.Events[0].ID }},
		{"unnamed", func(*factum.EventStream) error {
			return factum.IllegalState("the stream")
		}, func(s *factum.EventStream) string { return s.Events[0].ID }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, ps := openSQLite(t)
			ctx := context.Background()
			log := eventstore.NewMemory()
			s := itemAddedStream(carts.WithID("cart-1"), 1)
			s.Events[0].IsLast = false
			s.Events = append(s.Events, factum.DomainEvent{ID: factum.NewID(), Name: "item_added", Sequence: 2, IsLast: true, Body: json.RawMessage(`{}`)})
			if err := log.Append(ctx, &s); err != nil {
				t.Fatal(err)
			}
			p, err := projection.New("shop", "blame_"+tc.name,
				func(_ context.Context, _ projection.Tx, s *factum.EventStream) error { return tc.blame(s) },
				projection.From(carts))
			if err != nil {
				t.Fatal(err)
			}
			recorded, _ := runToTheEnd(t, p, projection.Config{Log: log, Store: ps, Attempts: 1,
				Backoff: time.Millisecond, PollInterval: 10 * time.Millisecond})
			if len(recorded) != 1 {
				t.Fatalf("%d failures recorded, want 1", len(recorded))
			}
			if got, want := recorded[0].EventID, tc.want(&s); got != want {
				t.Errorf("the failure names event %q, want %q", got, want)
			}
		})
	}
}
