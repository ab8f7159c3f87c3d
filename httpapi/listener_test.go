package httpapi_test

import (
	"bufio"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/httpapi"
)

// Errors net/http's server answers before any handler runs come out of
// ErrorListener as typed JSON errors; ordinary responses pass unchanged.
func TestErrorListenerRewritesServerErrors(t *testing.T) {
	f := newFixture(t, nil)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: f.srv.Config.Handler, MaxHeaderBytes: 4 << 10, ReadHeaderTimeout: 5 * time.Second}
	go srv.Serve(httpapi.ErrorListener(ln))
	t.Cleanup(func() { srv.Close() })

	raw := func(t *testing.T, req string) (*http.Response, []byte) {
		t.Helper()
		c, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		c.SetDeadline(time.Now().Add(10 * time.Second))
		if _, err := io.WriteString(c, req); err != nil {
			t.Fatal(err)
		}
		res, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil {
			t.Fatalf("%q: %v", req, err)
		}
		defer res.Body.Close()
		b, err := io.ReadAll(res.Body)
		if err != nil {
			t.Fatal(err)
		}
		return res, b
	}
	for _, c := range []struct {
		name, req string
		status    int
	}{
		{"malformed request line", "GARBAGE\r\n\r\n", http.StatusBadRequest},
		{"malformed header", "GET /healthz HTTP/1.1\r\nHost: x\r\nNoColon\r\n\r\n", http.StatusBadRequest},
		{"missing Host", "GET /healthz HTTP/1.1\r\n\r\n", http.StatusBadRequest},
		{"headers too large", "GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: " + strings.Repeat("a", 8<<10) + "\r\n\r\n", http.StatusRequestHeaderFieldsTooLarge},
		{"unknown transfer encoding", "POST /cart/c1/add_item HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: bogus\r\n\r\n", http.StatusNotImplemented},
	} {
		t.Run(c.name, func(t *testing.T) {
			res, b := raw(t, c.req)
			if res.StatusCode != c.status || res.Header.Get("Content-Type") != "application/json" {
				t.Fatalf("%d %q %s, want %d JSON", res.StatusCode, res.Header.Get("Content-Type"), b, c.status)
			}
			var e httpapi.ErrorBody
			if err := json.Unmarshal(b, &e); err != nil || !e.Code.Valid() || e.Code == factum.CodeOk || e.Message == "" {
				t.Fatalf("body %q is not an error body: %v", b, err)
			}
		})
	}
	// A handler's response, error or not, is untouched.
	res, b := raw(t, "GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
	if res.StatusCode != http.StatusOK {
		t.Fatalf("healthz: %d %s", res.StatusCode, b)
	}
	res, b = raw(t, "GET /cart/none/state HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
	var e httpapi.ErrorBody
	if res.StatusCode != http.StatusNotFound || json.Unmarshal(b, &e) != nil || e.Code != factum.CodeNotFound || !strings.Contains(e.Message, "none") {
		t.Fatalf("handler's 404: %d %s", res.StatusCode, b)
	}
}
