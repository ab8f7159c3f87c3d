package httpapi_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/command"
	"github.com/factum-go/factum/engine"
	"github.com/factum-go/factum/httpapi"
)

// downErr stands for nats.UnavailableError: a dependency is unreachable,
// try again after a while.
type downErr struct{ after time.Duration }

func (e downErr) Error() string             { return "the command bus cannot reach its owner" }
func (e downErr) RetryAfter() time.Duration { return e.after }

type refusingBus struct{ err error }

func (b refusingBus) Send(context.Context, *factum.Command) error { return b.err }

// A send the bus refuses because a dependency is unreachable is 503 with
// Retry-After, its code still the retryable TooManyRequests; plain
// back-pressure stays 429.
func TestUnreachableBusIs503WithRetryAfter(t *testing.T) {
	for _, tc := range []struct {
		name       string
		err        error
		status     int
		retryAfter string
	}{
		{"unreachable", factum.Errorf(factum.CodeTooManyRequests, "%w", downErr{after: 2 * time.Second}), http.StatusServiceUnavailable, "2"},
		{"back-pressure", factum.NewError(factum.CodeTooManyRequests, "lane full"), http.StatusTooManyRequests, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, func(c *engine.Config, _ *httpapi.Config) {
				c.Bus = engine.SendWrapper(engine.DispatcherBus(command.DispatcherConfig{}), func(command.Bus) command.Bus { return refusingBus{tc.err} })
			})
			r := f.do(t, "POST", "/cart/c1/add_item", `{"sku":"sku-1","qty":1}`)
			if r.status != tc.status || r.header.Get("Retry-After") != tc.retryAfter {
				t.Fatalf("status %d, Retry-After %q; want %d, %q (%s)", r.status, r.header.Get("Retry-After"), tc.status, tc.retryAfter, r.body)
			}
			body := decode[httpapi.ErrorBody](t, r)
			if body.Code != factum.CodeTooManyRequests || !body.Retryable {
				t.Fatalf("body %+v, want retryable TooManyRequests", body)
			}
		})
	}
}
