package httpapi_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/aggregate"
	"github.com/factum-go/factum/engine"
	"github.com/factum-go/factum/eventstore"
	"github.com/factum-go/factum/httpapi"
)

func TestCommandBodyUnknownFieldRefused(t *testing.T) {
	f := newFixture(t, nil)
	for _, c := range []struct{ body, field string }{
		{`{"sku":"sku-1","qty":2,"quantity":3}`, "quantity"},
		{`{"sku":"sku-1","qyt":2}`, "qyt"},
	} {
		r := f.do(t, "POST", "/cart/c1/add_item", c.body)
		e := wantError(t, r, http.StatusBadRequest, factum.CodeBadRequest)
		if !strings.Contains(e.Message, `"`+c.field+`"`) {
			t.Errorf("body %s: message %q does not name the field %q", c.body, e.Message, c.field)
		}
	}
	r := f.do(t, "POST", "/cart/c1/add_item", `{"sku":"sku-1","qty":2} {"x":1}`)
	wantError(t, r, http.StatusBadRequest, factum.CodeBadRequest)
	// Nothing was appended by the refused bodies.
	r = f.do(t, "GET", "/cart/c1/state", "")
	wantError(t, r, http.StatusNotFound, factum.CodeNotFound)
	wantOK(t, f.do(t, "POST", "/cart/c1/add_item", `{"sku":"sku-1","qty":2}`))
}

type counter struct{ N int }
type bump struct{ By int }
type bumped struct{ By int }

func TestCommandBodyUnknownFieldsAllowedPerAggregate(t *testing.T) {
	lenient := aggregate.New[counter]("test", "counter",
		aggregate.Source(func(c *counter, e bumped) { c.N += e.By }),
		aggregate.Handle(func(_ context.Context, _ counter, b bump) ([]any, error) { return []any{bumped(b)}, nil }, aggregate.AllowCreate()),
		aggregate.AllowUnknownFields[counter](),
	)
	rt, err := engine.New(engine.Config{Store: eventstore.NewMemory()}, lenient)
	if err != nil {
		t.Fatal(err)
	}
	f := serve(t, rt, httpapi.Config{})
	wantOK(t, f.do(t, "POST", "/counter/k1/bump", `{"By":2,"newerField":true}`))
}
