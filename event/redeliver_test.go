package event_test

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/event"
	"github.com/factum-go/factum/eventstore"
)

// TestRedeliverRunsTheLiveChainOnce: a redelivery (a compensation's
// retry) passes through the consumer's, the processor's and the
// function's middleware as a live delivery does, in that order, and
// makes one attempt whatever Attempts says; a panic is an error; a
// function of another consumer is not called.
func TestRedeliverRunsTheLiveChainOnce(t *testing.T) {
	boom := errors.New("boom")
	tests := []struct {
		name    string
		handle  func() error
		wantErr func(error) bool
	}{
		{"success", func() error { return nil }, func(err error) bool { return err == nil }},
		{"failure", func() error { return boom }, func(err error) bool { return errors.Is(err, boom) }},
		{"panic", func() error { panic("boom") }, func(err error) bool { return factum.CodeOf(err) == factum.CodeInternalServerError }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var c calls
			attempts := 0
			p := event.MustProcessor("shop", "redeliver", factum.StageEventHandled,
				event.WithMiddleware(c.mw("processor")),
				event.OnStream("count", func(ctx context.Context, s *factum.EventStream) error {
					attempts++
					return tt.handle()
				}, nil, event.WithFunctionMiddleware(c.mw("function"))))
			cons, err := event.NewConsumer(p, event.Config{Log: eventstore.NewMemory(), Checkpoints: event.NewMemoryCheckpoints(),
				Attempts: 3, Backoff: time.Millisecond, Middleware: []event.Middleware{c.mw("engine")}})
			if err != nil {
				t.Fatal(err)
			}
			s := &factum.EventStream{ID: factum.NewID(), Version: 1}
			fn := factum.Function{Context: "shop", Processor: "redeliver", Name: "count"}
			ok, err := cons.Redeliver(context.Background(), fn, s, time.Minute)
			if !ok || !tt.wantErr(err) {
				t.Fatalf("Redeliver = %v, %v", ok, err)
			}
			if attempts != 1 {
				t.Errorf("%d attempts, want 1", attempts)
			}
			want := []string{"engine>count", "processor>count", "function>count", "<function", "<processor", "<engine"}
			if got, _ := c.snapshot(); !slices.Equal(got, want) {
				t.Errorf("middleware calls %v, want %v", got, want)
			}
			other := fn
			other.Name = "other"
			if ok, err := cons.Redeliver(context.Background(), other, s, time.Minute); ok || err != nil {
				t.Errorf("Redeliver of another function = %v, %v; want false, nil", ok, err)
			}
		})
	}
}
