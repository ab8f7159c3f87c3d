package httpapi_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/factum-go/factum/engine"
	"github.com/factum-go/factum/eventstore"
	"github.com/factum-go/factum/examples/cart"
	"github.com/factum-go/factum/httpapi"
)

func Example() {
	ctx := context.Background()
	rt, err := engine.New(engine.Config{Store: eventstore.NewMemory()},
		cart.New(cart.Items{"sku-1": true}, cart.DefaultLimits))
	if err != nil {
		panic(err)
	}
	if err := rt.Start(ctx); err != nil {
		panic(err)
	}
	defer rt.Shutdown(ctx)
	h, err := httpapi.New(httpapi.Config{Engine: rt})
	if err != nil {
		panic(err)
	}
	srv := httptest.NewServer(h)
	defer srv.Close()

	req, _ := http.NewRequest("POST", srv.URL+"/cart/cart-42/add_item", strings.NewReader(`{"sku":"sku-1","qty":2}`))
	req.Header.Set(httpapi.HeaderRequestID, "req-7")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		panic(err)
	}
	res.Body.Close()
	fmt.Println(res.StatusCode, res.Header.Get(httpapi.HeaderAggregateVersion))

	res, err = http.Get(srv.URL + "/cart/cart-42/state")
	if err != nil {
		panic(err)
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	fmt.Print(strings.Contains(string(body), `"state":{"items":{"sku-1":2}}`))
	// Output:
	// 200 1
	// true
}
