package nats

import (
	"context"
	"fmt"
	"maps"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/aggregate"
	"github.com/factum-go/factum/command"
	"github.com/factum-go/factum/engine"
	"github.com/factum-go/factum/eventstore"
)

// A command sent without a header of its own and run here appends a
// stream whose header is the origin-only map itself, one map for all of
// them, not a copy per command: on the NATS bus (LocalFirst), and on the
// in-process dispatcher wrapped in Signals.Bus. A command with a header of
// the sender's gets a stream header of its own, and the sender's map is
// never written nor kept. The handler sees the headers it always saw.
func TestLocalStreamsKeepTheBusOriginMap(t *testing.T) {
	var w *world
	if os.Getenv("FACTUM_NATS_URL") != "" {
		w = sharedWorld(t, 4, 3*time.Second)
	} else {
		w = inProcessWorld(t, 4, 3*time.Second)
	}
	for _, wiring := range []string{"nats bus", "signals bus on the dispatcher", "signals bus on the nats bus"} {
		t.Run(wiring, func(t *testing.T) {
			var mu sync.Mutex
			seen := map[string]map[string]string{} // command ID -> the header its handler saw
			def := aggregate.New[tally](w.context, "tally",
				aggregate.Source(func(s *tally, e added) { s.Total += e.N }),
				aggregate.Handle(func(ctx context.Context, _ tally, a addN) ([]any, error) {
					cmd := aggregate.CommandFrom(ctx)
					mu.Lock()
					seen[cmd.ID] = maps.Clone(cmd.Header)
					mu.Unlock()
					return []any{added(a)}, nil
				}, aggregate.AllowCreate()),
			)
			store := eventstore.NewMemory()
			n := w.node(t, "i0", BusConfig{Local: LocalFirst})
			var e *engine.Engine
			switch wiring {
			case "nats bus":
				e = startOwning(t, w, n, engine.Config{Store: store, Bus: n.newBus}, def)
			case "signals bus on the nats bus":
				sig, err := NewSignals(SignalsConfig{Conn: n.nc, Instance: "i0", Prefix: w.prefix + ".signal"})
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { _ = sig.Close() })
				e = startOwning(t, w, n, engine.Config{Store: store, Bus: sig.Bus(n.newBus), Signals: sig.Sink}, def)
			default:
				sig, err := NewSignals(SignalsConfig{Conn: n.nc, Instance: "i0", Prefix: w.prefix + ".signal"})
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { _ = sig.Close() })
				if e, err = engine.New(engine.Config{Store: store, Bus: sig.Bus(nil), Signals: sig.Sink}, def); err != nil {
					t.Fatal(err)
				}
				if err := e.Start(context.Background()); err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { _ = e.Shutdown(context.Background()) })
			}
			// Signals.Bus stamps the wait (PROCESSED) beside the origin.
			var wait map[string]string
			if wiring != "nats bus" {
				wait = map[string]string{factum.OriginWaitHeader: "PROCESSED"}
			}
			checkStreamHeaders(t, e, store, def.Named(), wait, func(id string) map[string]string {
				mu.Lock()
				defer mu.Unlock()
				return seen[id]
			})
		})
	}
}

// checkStreamHeaders sends commands with the headers of the cases through
// e, two of each, waiting for PROCESSED, and checks the headers their
// streams in store and their handlers (seen, by command ID) got: the
// cases' with the entries of stamped added.
func checkStreamHeaders(t *testing.T, e *engine.Engine, store eventstore.Store, named factum.NamedAggregate, stamped map[string]string, seen func(commandID string) map[string]string) {
	t.Helper()
	origin := map[string]string{HeaderOrigin: "i0"}
	for k, tc := range []struct {
		name   string
		header func() map[string]string // the sender's, made anew per command
		want   map[string]string        // the stream's and the handler's
		shared bool                     // the stream's is the bus's origin map
	}{
		{"none", func() map[string]string { return nil }, origin, true},
		{"the sender's origin-only map", func() map[string]string { return map[string]string{HeaderOrigin: "i0"} }, origin, true},
		{"another origin", func() map[string]string { return map[string]string{HeaderOrigin: "i9"} }, origin, true},
		{"trace", func() map[string]string { return map[string]string{"traceparent": "t"} }, map[string]string{"traceparent": "t", HeaderOrigin: "i0"}, false},
	} {
		tc.want = maps.Clone(tc.want)
		maps.Copy(tc.want, stamped)
		t.Run(tc.name, func(t *testing.T) {
			var streams []factum.EventStream
			var senders []map[string]string
			for i := range 2 {
				id := factum.AggregateID{NamedAggregate: named, ID: fmt.Sprintf("h%d-%d", k, i)}
				cmd := factum.NewCommand(id, addN{N: 1})
				cmd.Header = tc.header()
				before := maps.Clone(cmd.Header)
				senders = append(senders, cmd.Header)
				if _, err := e.Gateway().SendAndWait(context.Background(), cmd, command.Wait(factum.StageProcessed).Within(10*time.Second)); err != nil {
					t.Fatal(err)
				}
				if !maps.Equal(cmd.Header, before) {
					t.Fatalf("the sender's header became %v, was %v", cmd.Header, before)
				}
				id.Tenant = factum.DefaultTenant
				s, err := store.Lookup(context.Background(), id, cmd.ID)
				if err != nil {
					t.Fatal(err)
				}
				if !maps.Equal(s.Header, tc.want) {
					t.Fatalf("stream header %v, want %v", s.Header, tc.want)
				}
				if got := seen(cmd.ID); !maps.Equal(got, tc.want) {
					t.Fatalf("the handler saw the header %v, want %v", got, tc.want)
				}
				streams = append(streams, s)
			}
			for i, s := range streams {
				if senders[i] != nil && sameMap(s.Header, senders[i]) {
					t.Fatal("a stream keeps the sender's header map")
				}
			}
			if shared := sameMap(streams[0].Header, streams[1].Header); shared != tc.shared {
				t.Fatalf("the two streams share one header map: %v, want %v", shared, tc.shared)
			}
		})
	}
}
