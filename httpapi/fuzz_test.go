package httpapi_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/factum-go/factum/engine"
	"github.com/factum-go/factum/eventstore"
	"github.com/factum-go/factum/examples/cart"
	"github.com/factum-go/factum/httpapi"
)

// fuzzHandler is a cart service on the memory store whose waits end
// within 200 ms, so that no fuzzed header makes an input slow.
func fuzzHandler(f *testing.F) http.Handler {
	f.Helper()
	rt, err := engine.New(engine.Config{Store: eventstore.NewMemory()}, cart.New(cart.Items{"sku-1": true, "sku-2": true}, cart.DefaultLimits))
	if err != nil {
		f.Fatal(err)
	}
	if err := rt.Start(context.Background()); err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = rt.Shutdown(ctx)
	})
	h, err := httpapi.New(httpapi.Config{Engine: rt, MaxWaitTimeout: 200 * time.Millisecond})
	if err != nil {
		f.Fatal(err)
	}
	return h
}

// checkAnswer fails t on a 5xx, on a body that is not JSON, on a 200 that
// is not an Ok result and on an error without a code.
func checkAnswer(t *testing.T, rec *httptest.ResponseRecorder, input string) {
	t.Helper()
	if rec.Code >= 500 {
		t.Fatalf("%s: HTTP %d %s", input, rec.Code, rec.Body)
	}
	if rec.Code >= 300 && rec.Code < 400 && rec.Header().Get("Location") != "" {
		return // the router cleans a path with "." or ".." segments by redirecting
	}
	var body struct {
		Code      string `json:"code"`
		ErrorCode string `json:"errorCode"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil {
		t.Fatalf("%s: HTTP %d with a body that is not JSON: %q", input, rec.Code, rec.Body)
	}
	switch {
	case rec.Code == http.StatusOK && body.ErrorCode != "Ok":
		t.Fatalf("%s: 200 with errorCode %q: %s", input, body.ErrorCode, rec.Body)
	case rec.Code != http.StatusOK && body.Code == "":
		t.Fatalf("%s: HTTP %d without an error code: %s", input, rec.Code, rec.Body)
	}
}

// FuzzCommandBody: any command body, to any aggregate ID, is answered
// with a result or a coded 4xx error; never a 5xx, a panic or a body that
// is not JSON.
func FuzzCommandBody(f *testing.F) {
	for _, s := range []struct {
		cmd  uint8
		id   string
		body string
	}{
		{0, "c-1", `{"sku":"sku-1","qty":2}`},
		{0, "c-1", `{"sku":"sku-1","qty":"2"}`},
		{0, "c-1", `{"sku":"sku-1","qty":2,"extra":true}`},
		{0, "c-1", `{"sku":"sku-1","qty":1e400}`},
		{0, "c-1", `{"sku":"sku-9","qty":-1}`},
		{1, "c-1", `{"sku":"sku-1"}`},
		{2, "c-2", `{"sku":"sku-2","qty":99}`},
		{3, "c-1", ``},
		{3, "c-1", `null`},
		{0, "", `{"sku":"sku-1","qty":1}`},
		{0, "a b", `{"sku":"\ud800","qty":1}`},
		{0, "c-1", `{"sku":"sku-1","qty":1}{}`},
		{0, "c-1", "\xff\xfe"},
		{0, "c-1", `[` + strings.Repeat(`[`, 1000)},
	} {
		f.Add(s.cmd, s.id, []byte(s.body))
	}
	h := fuzzHandler(f)
	commands := []string{"add_item", "remove_item", "change_quantity", "clear_cart", "no_such_command"}
	f.Fuzz(func(t *testing.T, cmd uint8, id string, body []byte) {
		path := "/cart/" + url.PathEscape(id) + "/" + commands[int(cmd)%len(commands)]
		if id == "" {
			path = "/cart/" + commands[int(cmd)%len(commands)]
		}
		req := httptest.NewRequest(http.MethodPost, "http://factum.test"+path, strings.NewReader(string(body)))
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		checkAnswer(t, rec, path+" "+string(body))
	})
}

// FuzzCommandHeaders: any values of the Command-* headers are applied or
// refused with a coded 4xx error; a refused header sends nothing.
func FuzzCommandHeaders(f *testing.F) {
	for _, s := range [][6]string{
		{"req-1", "", "PROCESSED", "", "", ""},
		{"req-1", "1", "snapshot", "shop", "snapshotter", "cart"},
		{"", "0", "SENT", "", "", "5000"},
		{"", "-1", "processed", "", "", "1.5s"},
		{"", "99999999999999999999", "BOGUS", "", "", "0"},
		{"r\x00", "", "PROJECTED", "", "", "1ms"},
		{"", "", "SAGA_HANDLED", "x", "", "9223372036854775807"},
		{"", "", "EVENT_HANDLED", "", "", "-5s"},
		{strings.Repeat("r", 300), "", "", "", "f", "1h"},
	} {
		f.Add(s[0], s[1], s[2], s[3], s[4], s[5])
	}
	h := fuzzHandler(f)
	f.Fuzz(func(t *testing.T, requestID, version, stage, waitContext, waitFunction, timeout string) {
		req := httptest.NewRequest(http.MethodPost, "http://factum.test/cart/c-h/add_item", strings.NewReader(`{"sku":"sku-1","qty":1}`))
		for name, v := range map[string]string{
			httpapi.HeaderRequestID:        requestID,
			httpapi.HeaderAggregateVersion: version,
			httpapi.HeaderWaitStage:        stage,
			httpapi.HeaderWaitContext:      waitContext,
			httpapi.HeaderWaitFunction:     waitFunction,
			httpapi.HeaderWaitTimeout:      timeout,
		} {
			if v != "" {
				req.Header.Set(name, v)
			}
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		checkAnswer(t, rec, strings.Join([]string{requestID, version, stage, waitContext, waitFunction, timeout}, " | "))
	})
}
