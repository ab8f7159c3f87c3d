package idempotency_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/idempotency"
)

func TestMiddlewareKeyForms(t *testing.T) {
	s := newServer(t, time.Minute, idempotency.MiddlewareOptions{}, created)
	// The draft's structured-field string and the bare form name the same
	// key.
	if r := s.do("POST", "/orders", `"a\"b"`, "{}"); r.status != http.StatusCreated {
		t.Fatalf("quoted key: %d %s", r.status, r.body)
	}
	if r := s.do("POST", "/orders", `a"b`, "{}"); r.header.Get(idempotency.HeaderReplayed) != "true" {
		t.Fatalf("bare spelling of the quoted key not replayed: %d %v", r.status, r.header)
	}
	s.wantCalls(1)
	for _, bad := range []string{`"a\x"`, `"é"`, strings.Repeat("k", idempotency.MaxValueLen+1), `""`} {
		wantProblem(t, s.do("POST", "/orders", bad, "{}"), http.StatusBadRequest, idempotency.ProblemKeyInvalid)
	}
	wantProblem(t, s.do("POST", "/orders", "", "{}", idempotency.HeaderKey, "k1", idempotency.HeaderKey, "k2"),
		http.StatusBadRequest, idempotency.ProblemKeyInvalid)
	s.wantCalls(1)
}

func TestMiddlewareTenantScopes(t *testing.T) {
	tenant := func(r *http.Request) (string, error) {
		if t := r.Header.Get("X-Tenant"); t != "" {
			return t, nil
		}
		return "", errors.New("no tenant")
	}
	s := newServer(t, time.Minute, idempotency.MiddlewareOptions{Tenant: tenant}, created)
	for _, tn := range []string{"acme", "globex", "acme"} {
		s.do("POST", "/orders", "shared-key", "{}", "X-Tenant", tn)
	}
	s.wantCalls(2) // once per tenant
	wantProblem(t, s.do("POST", "/orders", "shared-key", "{}"), http.StatusBadRequest, idempotency.ProblemBadRequest)
	s.wantCalls(2)
}

func TestMiddlewareRequestBodyLimit(t *testing.T) {
	s := newServer(t, time.Minute, idempotency.MiddlewareOptions{MaxRequestBytes: 10}, created)
	wantProblem(t, s.do("POST", "/orders", "key-1", "01234567890"), http.StatusRequestEntityTooLarge, idempotency.ProblemBodyTooLarge)
	s.wantCalls(0)
	if r := s.do("POST", "/orders", "key-1", "0123456789"); r.status != http.StatusCreated {
		t.Fatalf("body at the limit: %d %s", r.status, r.body)
	}
}

func TestMiddlewareResponseLimit(t *testing.T) {
	big := strings.Repeat("x", 100)
	s := newServer(t, time.Minute, idempotency.MiddlewareOptions{MaxResponseBytes: 16}, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Location", "/orders/o-1")
		w.WriteHeader(http.StatusCreated)
		io.WriteString(w, big[:50])
		io.WriteString(w, big[50:])
	})
	if r := s.do("POST", "/orders", "key-1", "{}"); r.status != http.StatusCreated || r.body != big {
		t.Fatalf("first client got %d and %d bytes; want 201 and all %d", r.status, len(r.body), len(big))
	}
	r := s.do("POST", "/orders", "key-1", "{}")
	p := wantProblem(t, r, http.StatusCreated, idempotency.ProblemBodyNotStored)
	if r.header.Get(idempotency.HeaderBodyOmitted) != "true" || r.header.Get(idempotency.HeaderReplayed) != "true" ||
		r.header.Get("Location") != "/orders/o-1" || !strings.Contains(p.Detail, "100-byte") {
		t.Fatalf("oversized replay: %v %+v", r.header, p)
	}
	s.wantCalls(1)
}

// TestMiddlewareRenewsLease: with RenewEvery, a handler outlasting the
// lease keeps the key; without it, a duplicate runs once the lease ends.
func TestMiddlewareRenewsLease(t *testing.T) {
	const lease = 300 * time.Millisecond
	slow := func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(3 * lease)
		created(w, r)
	}
	for _, c := range []struct {
		renew time.Duration
		calls int32
	}{{lease / 5, 1}, {0, 2}} {
		s := newServer(t, lease, idempotency.MiddlewareOptions{RenewEvery: c.renew}, slow)
		done := make(chan response)
		go func() { done <- s.do("POST", "/orders", "key-1", "{}") }()
		time.Sleep(2 * lease)
		dup := s.do("POST", "/orders", "key-1", "{}")
		<-done
		if c.calls == 1 {
			wantProblem(t, dup, http.StatusConflict, idempotency.ProblemInProgress)
		}
		s.wantCalls(c.calls)
	}
}

// TestMiddlewareLostKeyCancelsHandler: when renewal finds the key lost,
// the handler's context is cancelled with the reason.
func TestMiddlewareLostKeyCancelsHandler(t *testing.T) {
	store, mw := newMiddleware(t, idempotency.Policy{}, idempotency.MiddlewareOptions{
		RenewEvery:  5 * time.Millisecond,
		Fingerprint: func(*http.Request, []byte) (string, error) { return "fp", nil },
	})
	k := idempotency.Key{Tenant: factum.DefaultTenant, Operation: "POST /orders", Value: "key-1"}
	cause := make(chan error, 1)
	h := mw.Wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec, _, err := store.Get(r.Context(), k)
		if err != nil {
			t.Error(err)
		}
		// Another party takes the key away from this attempt.
		if err := store.Fail(context.Background(), k, "fp", rec.Attempt, true); err != nil {
			t.Error(err)
		}
		select {
		case <-r.Context().Done():
			cause <- context.Cause(r.Context())
		case <-time.After(10 * time.Second):
			cause <- errors.New("handler context never cancelled")
		}
	}))
	req := httptest.NewRequest("POST", "/orders", strings.NewReader("{}"))
	req.Header.Set(idempotency.HeaderKey, "key-1")
	h.ServeHTTP(httptest.NewRecorder(), req)
	if err := <-cause; !errors.Is(err, idempotency.ErrStaleAttempt) {
		t.Fatalf("handler context cause = %v, want ErrStaleAttempt", err)
	}
}

// TestMiddlewareFinishesAfterClientLeft: the outcome is recorded (or the
// key released) even when the request's context ended while the handler
// ran.
func TestMiddlewareFinishesAfterClientLeft(t *testing.T) {
	for _, c := range []struct {
		status int
		runs   int
	}{{http.StatusCreated, 1}, {http.StatusServiceUnavailable, 2}} {
		t.Run(http.StatusText(c.status), func(t *testing.T) {
			_, mw := newMiddleware(t, idempotency.Policy{}, idempotency.MiddlewareOptions{})
			runs := 0
			ctx, hangUp := context.WithCancel(context.Background())
			h := mw.Wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				runs++
				hangUp() // the client goes away while the handler finishes
				w.WriteHeader(c.status)
				io.WriteString(w, "outcome")
			}))
			send := func(ctx context.Context) *httptest.ResponseRecorder {
				req := httptest.NewRequestWithContext(ctx, "POST", "/orders", strings.NewReader("{}"))
				req.Header.Set(idempotency.HeaderKey, "key-1")
				rec := httptest.NewRecorder()
				h.ServeHTTP(rec, req)
				return rec
			}
			send(ctx)
			r := send(context.Background())
			if r.Code != c.status || r.Body.String() != "outcome" || runs != c.runs {
				t.Fatalf("retry after the client left: %d %q, %d runs; want %d and %d runs", r.Code, r.Body, runs, c.status, c.runs)
			}
			if replayed := r.Header().Get(idempotency.HeaderReplayed) == "true"; replayed != (c.runs == 1) {
				t.Fatalf("retry replayed=%v, want %v", replayed, c.runs == 1)
			}
		})
	}
}

// downStore fails every call, as an unreachable backend would.
type downStore struct{ idempotency.Store }

func (downStore) Begin(context.Context, idempotency.Key, string) (idempotency.Record, bool, error) {
	return idempotency.Record{}, false, errors.New("connection refused")
}

func TestMiddlewareStoreDownIs503(t *testing.T) {
	mw, err := idempotency.NewMiddleware(downStore{}, idempotency.MiddlewareOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ran := false
	h := mw.Wrap(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { ran = true }))
	req := httptest.NewRequest("POST", "/orders", strings.NewReader("{}"))
	req.Header.Set(idempotency.HeaderKey, "key-1")
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	r := response{status: rec.Code, header: rec.Header(), body: rec.Body.String()}
	wantProblem(t, r, http.StatusServiceUnavailable, idempotency.ProblemUnavailable)
	if ran || r.header.Get("Retry-After") == "" {
		t.Fatalf("store down: handler ran=%v, Retry-After %q", ran, r.header.Get("Retry-After"))
	}
}

func TestNewMiddlewareRefusesBadOptions(t *testing.T) {
	store, _ := idempotency.NewMemory(idempotency.MemoryConfig{})
	for _, c := range []struct {
		store idempotency.Store
		opts  idempotency.MiddlewareOptions
	}{
		{nil, idempotency.MiddlewareOptions{}},
		{store, idempotency.MiddlewareOptions{MaxRequestBytes: -1}},
		{store, idempotency.MiddlewareOptions{MaxResponseBytes: -1}},
		{store, idempotency.MiddlewareOptions{RenewEvery: -time.Second}},
	} {
		if _, err := idempotency.NewMiddleware(c.store, c.opts); !errors.Is(err, factum.ErrIllegalArgument) {
			t.Errorf("NewMiddleware(%v, %+v) = %v, want IllegalArgument", c.store, c.opts, err)
		}
	}
}

func TestDefaultOperation(t *testing.T) {
	long := "/" + strings.Repeat("p", idempotency.MaxOperationLen)
	cases := []struct {
		method, pattern, path, want string
	}{
		{"POST", "POST /orders/{id}", "/orders/7", "POST /orders/{id}"},
		{"PUT", "/orders/", "/orders/7", "PUT /orders/"},
		{"POST", "POST example.com/orders", "/orders", "POST /orders"},
		{"POST", "example.com/orders", "/orders", "POST /orders"},
		{"DELETE", "", "/orders/7", "DELETE /orders/7"},
	}
	for _, c := range cases {
		r := httptest.NewRequest(c.method, c.path, nil)
		r.Pattern = c.pattern
		if got := idempotency.DefaultOperation(r); got != c.want {
			t.Errorf("DefaultOperation(%s %q, pattern %q) = %q, want %q", c.method, c.path, c.pattern, got, c.want)
		}
	}
	r := httptest.NewRequest("POST", long, nil)
	if got := idempotency.DefaultOperation(r); len(got) > idempotency.MaxOperationLen || !strings.HasPrefix(got, "POST sha256:") {
		t.Errorf("DefaultOperation of a long path = %q", got)
	}
}

// TestMiddlewarePerRoute: one store, two routes, a key required on one and
// optional on the other.
func TestMiddlewarePerRoute(t *testing.T) {
	store, err := idempotency.NewMemory(idempotency.MemoryConfig{})
	if err != nil {
		t.Fatal(err)
	}
	required, err := idempotency.NewMiddleware(store, idempotency.MiddlewareOptions{Required: true})
	if err != nil {
		t.Fatal(err)
	}
	optional, err := idempotency.NewMiddleware(store, idempotency.MiddlewareOptions{})
	if err != nil {
		t.Fatal(err)
	}
	runs := map[string]int{}
	handler := func(w http.ResponseWriter, r *http.Request) {
		runs[r.Pattern]++
		w.WriteHeader(http.StatusCreated)
	}
	mux := http.NewServeMux()
	mux.Handle("POST /payments", required.Wrap(http.HandlerFunc(handler)))
	mux.Handle("POST /comments", optional.Wrap(http.HandlerFunc(handler)))
	send := func(path, key string) int {
		req := httptest.NewRequest("POST", path, strings.NewReader("{}"))
		if key != "" {
			req.Header.Set(idempotency.HeaderKey, key)
		}
		rec := httptest.NewRecorder()
		mux.ServeHTTP(rec, req)
		return rec.Code
	}
	if got := send("/payments", ""); got != http.StatusBadRequest {
		t.Fatalf("required route without a key: %d", got)
	}
	if got := send("/comments", ""); got != http.StatusCreated {
		t.Fatalf("optional route without a key: %d", got)
	}
	// The same key on both routes names two operations.
	for range 2 {
		send("/payments", "k")
		send("/comments", "k")
	}
	if runs["POST /payments"] != 1 || runs["POST /comments"] != 2 {
		t.Fatalf("runs %v; want payments once, comments once without a key and once with", runs)
	}
}
