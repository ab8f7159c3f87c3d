package projection_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/event"
	"github.com/factum-go/factum/eventstore"
	"github.com/factum-go/factum/projection"
)

// A stream's failure names the event the function's error names (an
// *event.EventError, as the event consumer honours it), and the first
// event the projection consumes when the error names none.
func TestAFailureNamesTheEventItsErrorNames(t *testing.T) {
	for _, tc := range []struct {
		name  string
		blame func(s *factum.EventStream) error
		want  func(s *factum.EventStream) string
	}{
		{"named", func(s *factum.EventStream) error {
			return &event.EventError{EventID: s.Events[1].ID, Err: factum.IllegalState("the second event")}
		}, func(s *factum.EventStream) string { return s.Events[1].ID }},
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
			var recorded []event.Failure
			rec := event.FailureRecorderFunc(func(_ context.Context, f event.Failure) error {
				recorded = append(recorded, f)
				return nil
			})
			r, err := projection.NewRunner(p, projection.Config{Log: log, Store: ps, Failures: rec, Attempts: 1,
				Backoff: time.Millisecond, PollInterval: 10 * time.Millisecond})
			if err != nil {
				t.Fatal(err)
			}
			r.Drain()
			runCtx, cancel := context.WithTimeout(ctx, time.Minute)
			defer cancel()
			if err := r.Run(runCtx); err != nil {
				t.Fatal(err)
			}
			if len(recorded) != 1 {
				t.Fatalf("%d failures recorded, want 1", len(recorded))
			}
			if got, want := recorded[0].EventID, tc.want(&s); got != want {
				t.Errorf("the failure names event %q, want %q", got, want)
			}
		})
	}
}
