package httpapi_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/factum-go/factum/aggregate"
	"github.com/factum-go/factum/engine"
	"github.com/factum-go/factum/eventstore"
	"github.com/factum-go/factum/httpapi"
	"github.com/factum-go/factum/idempotency"
)

type (
	slowCounter struct{ N int }
	tick        struct{}
	ticked      struct{}
)

// An Idempotency-Key with a wait that times out runs the command once: the
// 408 releases the key for a retry, and the retry's command carries the
// request ID bound to the key, which the event store appends only once.
// The handler is held until every try has timed out, so each of them
// answers 408 and each retry runs the route again.
func TestIdempotencyKeyAndWaitTimeoutAppendOnce(t *testing.T) {
	gate := make(chan struct{})
	var once sync.Once
	release := func() { once.Do(func() { close(gate) }) }
	t.Cleanup(release)
	counters := aggregate.New[slowCounter]("test", "slow",
		aggregate.Source(func(c *slowCounter, _ ticked) { c.N++ }),
		aggregate.Handle(func(ctx context.Context, _ slowCounter, _ tick) ([]any, error) {
			select {
			case <-gate:
			case <-ctx.Done():
				return nil, ctx.Err()
			}
			return []any{ticked{}}, nil
		}, aggregate.AllowCreate()),
	)
	store := eventstore.NewMemory()
	rt, err := engine.New(engine.Config{Store: store}, counters)
	if err != nil {
		t.Fatal(err)
	}
	if err := rt.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	idem, err := idempotency.NewMemory(idempotency.MemoryConfig{})
	if err != nil {
		t.Fatal(err)
	}
	mw, err := idempotency.NewMiddleware(idem, idempotency.MiddlewareOptions{})
	if err != nil {
		t.Fatal(err)
	}
	h, err := httpapi.New(httpapi.Config{Engine: rt, CommandMiddleware: mw.Wrap})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(func() {
		release()
		srv.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = rt.Shutdown(ctx)
	})
	send := func(timeout string) *http.Response {
		req, _ := http.NewRequest("POST", srv.URL+"/tenant/acme/slow/s-1/tick", strings.NewReader(`{}`))
		req.Header.Set(idempotency.HeaderKey, "k-1")
		if timeout != "" {
			req.Header.Set(httpapi.HeaderWaitTimeout, timeout)
		}
		res, err := srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, res.Body)
		res.Body.Close()
		return res
	}
	var requestIDs []string
	for i := range 10 {
		res := send("1ms")
		if res.StatusCode != http.StatusRequestTimeout {
			t.Fatalf("try %d: %d, want 408 while the handler is held", i, res.StatusCode)
		}
		requestIDs = append(requestIDs, res.Header.Get(httpapi.HeaderRequestID))
	}
	for _, id := range requestIDs {
		if id == "" || id != requestIDs[0] {
			t.Fatalf("tries with one key sent request IDs %v, want one", requestIDs)
		}
	}
	release()
	if res := send(""); res.StatusCode != http.StatusOK {
		t.Fatalf("retry after the release: %d", res.StatusCode)
	}
	// Every queued try has been processed once the last one answered (one
	// aggregate's commands run in order): one stream, with the key's
	// request ID.
	id := counters.Named().WithID("s-1").WithTenant("acme")
	streams, err := store.Load(context.Background(), id, 1, eventstore.MaxVersion)
	if err != nil {
		t.Fatal(err)
	}
	if len(streams) != 1 || streams[0].RequestID != requestIDs[0] {
		t.Fatalf("%d streams after 11 tries with one Idempotency-Key, want 1 with request %s: %+v", len(streams), requestIDs[0], streams)
	}
	if res := send(""); res.Header.Get(idempotency.HeaderReplayed) != "true" {
		t.Fatalf("after the outcome was recorded: replayed=%q", res.Header.Get(idempotency.HeaderReplayed))
	}
	// A Command-Request-Id given by the caller is kept.
	req, _ := http.NewRequest("POST", srv.URL+"/tenant/acme/slow/s-2/tick", strings.NewReader(`{}`))
	req.Header.Set(idempotency.HeaderKey, "k-2")
	req.Header.Set(httpapi.HeaderRequestID, "mine")
	res, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusOK || res.Header.Get(httpapi.HeaderRequestID) != "mine" {
		t.Fatalf("caller's request ID: %d %q", res.StatusCode, res.Header.Get(httpapi.HeaderRequestID))
	}
}
