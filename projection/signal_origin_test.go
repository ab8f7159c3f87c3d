package projection_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/eventstore"
	"github.com/factum-go/factum/projection"
)

// A PROJECTED signal names the origin of the stream's command and the
// stage the wait there is for, from the stream's header (wait 0 without
// one): routing, for a transport to send it there, or not at all when the
// wait cannot use it.
func TestProjectedSignalNamesTheOriginAndItsWait(t *testing.T) {
	ctx := context.Background()
	_, ps := openSQLite(t)
	log := eventstore.NewMemory()
	var mu sync.Mutex
	got := map[string]factum.Signal{}
	p, err := projection.New("shop", "origins",
		func(context.Context, projection.Tx, *factum.EventStream) error { return nil }, projection.From(carts))
	if err != nil {
		t.Fatal(err)
	}
	r, err := projection.NewRunner(p, projection.Config{Log: log, Store: ps, PollInterval: time.Hour, Notify: func(s factum.Signal) {
		mu.Lock()
		defer mu.Unlock()
		got[s.CommandID] = s
	}})
	if err != nil {
		t.Fatal(err)
	}
	headers := []struct {
		header map[string]string
		origin string
		wait   factum.CommandStage
	}{
		{map[string]string{factum.OriginHeader: "web-2", factum.OriginWaitHeader: "SAGA_HANDLED"}, "web-2", factum.StageSagaHandled},
		{map[string]string{factum.OriginHeader: "web-2"}, "web-2", 0},
		{nil, "", 0},
	}
	var streams []factum.EventStream
	for i, h := range headers {
		s := itemAddedStream(carts.WithID("a"), i+1)
		s.Header = h.header
		if err := log.Append(ctx, &s); err != nil {
			t.Fatal(err)
		}
		streams = append(streams, s)
	}
	r.Drain()
	if err := r.Run(ctx); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	for i, h := range headers {
		sig, ok := got[streams[i].CommandID]
		if !ok || sig.Origin != h.origin || sig.OriginWait != h.wait {
			t.Errorf("stream %d: signal %+v (%v), want origin %q and wait %v", i, sig, ok, h.origin, h.wait)
		}
	}
}
