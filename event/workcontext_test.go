package event_test

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/event"
	"github.com/factum-go/factum/eventstore"
)

type workMark struct{}

// Config.WorkContext marks every call of Run's functions, on one lane or
// several, and no call made by Redeliver.
func TestWorkContextMarksRunsDeliveriesOnly(t *testing.T) {
	for _, c := range []struct {
		name        string
		concurrency int
	}{{"one lane", 1}, {"four lanes", 4}} {
		t.Run(c.name, func(t *testing.T) {
			st := eventstore.NewMemory()
			var mu sync.Mutex
			marked, unmarked := 0, 0
			p := event.MustProcessor("shop", "work", factum.StageEventHandled,
				event.OnStream("item_added", func(ctx context.Context, _ *factum.EventStream) error {
					mu.Lock()
					defer mu.Unlock()
					if ctx.Value(workMark{}) == "run" {
						marked++
					} else {
						unmarked++
					}
					return nil
				}, nil))
			cons, err := event.NewConsumer(p, event.Config{Log: st, Checkpoints: event.NewMemoryCheckpoints(),
				Concurrency: c.concurrency,
				WorkContext: func(ctx context.Context) context.Context { return context.WithValue(ctx, workMark{}, "run") }})
			if err != nil {
				t.Fatal(err)
			}
			const n = 24
			var last *factum.EventStream
			for a := range n {
				last = appendStream(t, st, fmt.Sprint("w-", a), 1, "item_added")
			}
			start(t, cons)
			counts := func() (int, int) {
				mu.Lock()
				defer mu.Unlock()
				return marked, unmarked
			}
			waitFor(t, "every stream", func() bool { m, u := counts(); return m+u == n })
			if ok, err := cons.Redeliver(context.Background(), p.Handlers()[0].Function, last, 0); !ok || err != nil {
				t.Fatalf("Redeliver: %v, %v", ok, err)
			}
			if m, u := counts(); m != n || u != 1 {
				t.Fatalf("%d marked and %d unmarked calls, want %d marked by Run and Redeliver's unmarked", m, u, n)
			}
		})
	}
}
