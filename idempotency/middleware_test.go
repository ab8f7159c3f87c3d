package idempotency_test

import (
	"encoding/json"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/factum-go/factum/idempotency"
)

// server is an HTTP server whose POST /orders route is protected by the
// middleware and counts its handler's runs.
type server struct {
	t     *testing.T
	url   string
	store *idempotency.Memory
	calls atomic.Int32
}

// newMiddleware returns a middleware with opts over a fresh memory store
// with policy.
func newMiddleware(t testing.TB, policy idempotency.Policy, opts idempotency.MiddlewareOptions) (*idempotency.Memory, *idempotency.Middleware) {
	t.Helper()
	store, err := idempotency.NewMemory(idempotency.MemoryConfig{Policy: policy})
	if err != nil {
		t.Fatal(err)
	}
	mw, err := idempotency.NewMiddleware(store, opts)
	if err != nil {
		t.Fatal(err)
	}
	return store, mw
}

// newServer serves handler at "POST /orders" behind a middleware with
// opts over a fresh memory store with lease.
func newServer(t *testing.T, lease time.Duration, opts idempotency.MiddlewareOptions, handler http.HandlerFunc) *server {
	t.Helper()
	store, mw := newMiddleware(t, idempotency.Policy{Lease: lease}, opts)
	s := &server{t: t, store: store}
	mux := http.NewServeMux()
	mux.Handle("POST /orders", mw.Wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.calls.Add(1)
		handler(w, r)
	})))
	mux.Handle("GET /orders", mw.Wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.calls.Add(1)
		io.WriteString(w, "list")
	})))
	srv := httptest.NewUnstartedServer(mux)
	srv.Config.ErrorLog = log.New(io.Discard, "", 0) // panicking handlers are part of the tests
	srv.Start()
	t.Cleanup(srv.Close)
	s.url = srv.URL
	return s
}

// created answers 201 with a Location, a body echoing the request and a
// header that must not be replayed.
func created(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Location", "/orders/o-1")
	w.Header().Set("X-Request-Trace", "first-run-only")
	w.WriteHeader(http.StatusCreated)
	fmt.Fprintf(w, `{"order":"o-1","echo":%q}`, body)
}

type response struct {
	status int
	header http.Header
	body   string
}

// do sends a request; key "" sends no Idempotency-Key header.
func (s *server) do(method, path, key, body string, header ...string) response {
	s.t.Helper()
	req, err := http.NewRequest(method, s.url+path, strings.NewReader(body))
	if err != nil {
		s.t.Fatal(err)
	}
	if key != "" {
		req.Header.Set(idempotency.HeaderKey, key)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Add(header[i], header[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return response{status: -1, body: err.Error()}
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return response{status: -1, body: err.Error()}
	}
	return response{status: resp.StatusCode, header: resp.Header, body: string(b)}
}

func (s *server) wantCalls(n int32) {
	s.t.Helper()
	if got := s.calls.Load(); got != n {
		s.t.Fatalf("handler ran %d times, want %d", got, n)
	}
}

// wantProblem fails unless r is a problem+json response of the status and
// type, and returns the problem.
func wantProblem(t *testing.T, r response, status int, typ string) idempotency.Problem {
	t.Helper()
	if r.status != status || r.header.Get("Content-Type") != "application/problem+json" {
		t.Fatalf("got %d %q %s; want %d application/problem+json", r.status, r.header.Get("Content-Type"), r.body, status)
	}
	var p idempotency.Problem
	if err := json.Unmarshal([]byte(r.body), &p); err != nil {
		t.Fatalf("problem body %q: %v", r.body, err)
	}
	if p.Type != typ || p.Status != status || p.Title == "" {
		t.Fatalf("problem %+v; want type %s, status %d and a title", p, typ, status)
	}
	return p
}

func TestMiddlewareReplaysFirstResponse(t *testing.T) {
	s := newServer(t, time.Minute, idempotency.MiddlewareOptions{}, created)
	first := s.do("POST", "/orders", "key-1", `{"sku":"a"}`)
	if first.status != http.StatusCreated || first.header.Get(idempotency.HeaderReplayed) != "" {
		t.Fatalf("first response %d %v", first.status, first.header)
	}
	for range 3 {
		again := s.do("POST", "/orders", "key-1", `{"sku":"a"}`)
		switch {
		case again.status != http.StatusCreated || again.body != first.body:
			t.Fatalf("replay %d %q, want %d %q", again.status, again.body, first.status, first.body)
		case again.header.Get(idempotency.HeaderReplayed) != "true":
			t.Fatalf("replay lacks %s: true: %v", idempotency.HeaderReplayed, again.header)
		case again.header.Get("Location") != "/orders/o-1" || again.header.Get("Content-Type") != "application/json":
			t.Fatalf("replay lost the kept headers: %v", again.header)
		case again.header.Get("X-Request-Trace") != "":
			t.Fatalf("replay carries a header not configured for replay: %v", again.header)
		}
	}
	s.wantCalls(1)
	// The handler read the whole body the middleware had fingerprinted.
	if !strings.Contains(first.body, `\"sku\":\"a\"`) {
		t.Fatalf("handler saw another body: %s", first.body)
	}
}

func TestMiddlewareOtherPayloadIs422(t *testing.T) {
	release := make(chan struct{})
	s := newServer(t, time.Minute, idempotency.MiddlewareOptions{}, func(w http.ResponseWriter, r *http.Request) {
		<-release
		created(w, r)
	})
	done := make(chan response)
	go func() { done <- s.do("POST", "/orders", "key-1", `{"sku":"a"}`) }()
	waitFor(t, func() bool { return s.calls.Load() == 1 })
	// While the first request runs ...
	wantProblem(t, s.do("POST", "/orders", "key-1", `{"sku":"b"}`), http.StatusUnprocessableEntity, idempotency.ProblemKeyReused)
	close(release)
	if r := <-done; r.status != http.StatusCreated {
		t.Fatalf("first request: %d %s", r.status, r.body)
	}
	// ... and after it finished: the replay path checks the payload too.
	wantProblem(t, s.do("POST", "/orders", "key-1", `{"sku":"b"}`), http.StatusUnprocessableEntity, idempotency.ProblemKeyReused)
	wantProblem(t, s.do("POST", "/orders?coupon=x", "key-1", `{"sku":"a"}`), http.StatusUnprocessableEntity, idempotency.ProblemKeyReused)
	s.wantCalls(1)
}

func TestMiddlewareInProgressIs409WithRetryAfter(t *testing.T) {
	release := make(chan struct{})
	s := newServer(t, 30*time.Second, idempotency.MiddlewareOptions{}, func(w http.ResponseWriter, r *http.Request) {
		<-release
		created(w, r)
	})
	done := make(chan response)
	go func() { done <- s.do("POST", "/orders", "key-1", "{}") }()
	waitFor(t, func() bool { return s.calls.Load() == 1 })
	r := s.do("POST", "/orders", "key-1", "{}")
	wantProblem(t, r, http.StatusConflict, idempotency.ProblemInProgress)
	secs, err := strconv.Atoi(r.header.Get("Retry-After"))
	if err != nil || secs < 1 || secs > 30 {
		t.Fatalf("Retry-After %q; want whole seconds within the 30 s lease", r.header.Get("Retry-After"))
	}
	close(release)
	<-done
	if r := s.do("POST", "/orders", "key-1", "{}"); r.status != http.StatusCreated || r.header.Get(idempotency.HeaderReplayed) != "true" {
		t.Fatalf("after the first finished: %d %v", r.status, r.header)
	}
	s.wantCalls(1)
}

func TestMiddlewareConcurrentDuplicates(t *testing.T) {
	const n = 32
	release := make(chan struct{})
	s := newServer(t, time.Minute, idempotency.MiddlewareOptions{}, func(w http.ResponseWriter, r *http.Request) {
		<-release
		created(w, r)
	})
	var (
		wg        sync.WaitGroup
		mu        sync.Mutex
		statuses  = map[int]int{}
		conflicts atomic.Int32
		start     = make(chan struct{})
	)
	for range n {
		wg.Go(func() {
			<-start
			r := s.do("POST", "/orders", "dup-key", `{"sku":"a"}`)
			if r.status == http.StatusConflict {
				conflicts.Add(1)
			}
			mu.Lock()
			statuses[r.status]++
			mu.Unlock()
		})
	}
	close(start)
	// Every duplicate is answered while the one handler still runs.
	waitFor(t, func() bool { return conflicts.Load() == n-1 })
	close(release)
	wg.Wait()
	if statuses[http.StatusCreated] != 1 || statuses[http.StatusConflict] != n-1 {
		t.Fatalf("statuses %v; want one 201 and %d 409", statuses, n-1)
	}
	s.wantCalls(1)
	var replays sync.WaitGroup
	for range n {
		replays.Go(func() {
			if r := s.do("POST", "/orders", "dup-key", `{"sku":"a"}`); r.status != http.StatusCreated || r.header.Get(idempotency.HeaderReplayed) != "true" {
				t.Errorf("replay %d %v", r.status, r.header)
			}
		})
	}
	replays.Wait()
	s.wantCalls(1)
}

func TestMiddlewareMissingKey(t *testing.T) {
	required := newServer(t, time.Minute, idempotency.MiddlewareOptions{Required: true}, created)
	wantProblem(t, required.do("POST", "/orders", "", "{}"), http.StatusBadRequest, idempotency.ProblemKeyMissing)
	required.wantCalls(0)
	// Safe methods are never subject to the middleware.
	if r := required.do("GET", "/orders", "", ""); r.status != http.StatusOK {
		t.Fatalf("GET without a key: %d", r.status)
	}

	optional := newServer(t, time.Minute, idempotency.MiddlewareOptions{}, created)
	for range 2 {
		if r := optional.do("POST", "/orders", "", "{}"); r.status != http.StatusCreated || r.header.Get(idempotency.HeaderReplayed) != "" {
			t.Fatalf("optional key, none sent: %d %v", r.status, r.header)
		}
	}
	optional.wantCalls(2)
}

func TestMiddlewareSafeMethodsPassThrough(t *testing.T) {
	s := newServer(t, time.Minute, idempotency.MiddlewareOptions{Required: true}, created)
	for range 2 {
		if r := s.do("GET", "/orders", "key-1", ""); r.status != http.StatusOK || r.header.Get(idempotency.HeaderReplayed) != "" {
			t.Fatalf("GET with a key: %d %v", r.status, r.header)
		}
	}
	s.wantCalls(2)
}

// TestMiddlewareKeepOrRelease: final statuses are replayed; 5xx and
// "not now" statuses release the key so that a retry runs again.
func TestMiddlewareKeepOrRelease(t *testing.T) {
	cases := []struct {
		status int
		kept   bool
	}{
		{http.StatusOK, true},
		{http.StatusCreated, true},
		{http.StatusBadRequest, true},
		{http.StatusNotFound, true},
		{http.StatusUnprocessableEntity, true},
		{http.StatusUnauthorized, false},
		{http.StatusConflict, false},
		{http.StatusTooManyRequests, false},
		{http.StatusInternalServerError, false},
		{http.StatusServiceUnavailable, false},
	}
	for _, c := range cases {
		t.Run(strconv.Itoa(c.status), func(t *testing.T) {
			s := newServer(t, time.Minute, idempotency.MiddlewareOptions{}, func(w http.ResponseWriter, r *http.Request) {
				w.WriteHeader(c.status)
				io.WriteString(w, "outcome")
			})
			s.do("POST", "/orders", "key-1", "{}")
			second := s.do("POST", "/orders", "key-1", "{}")
			if second.status != c.status || second.body != "outcome" {
				t.Fatalf("second response %d %q", second.status, second.body)
			}
			if c.kept {
				s.wantCalls(1)
				if second.header.Get(idempotency.HeaderReplayed) != "true" {
					t.Fatal("kept response not marked as a replay")
				}
			} else {
				s.wantCalls(2)
			}
		})
	}
}

func TestMiddlewarePanicReleasesKey(t *testing.T) {
	var panicked atomic.Bool
	s := newServer(t, time.Minute, idempotency.MiddlewareOptions{}, func(w http.ResponseWriter, r *http.Request) {
		if !panicked.Swap(true) {
			panic("handler bug")
		}
		created(w, r)
	})
	if r := s.do("POST", "/orders", "key-1", "{}"); r.status != -1 {
		t.Fatalf("panicking handler answered %d; want the connection dropped", r.status)
	}
	if r := s.do("POST", "/orders", "key-1", "{}"); r.status != http.StatusCreated || r.header.Get(idempotency.HeaderReplayed) != "" {
		t.Fatalf("retry after a panic: %d %v; want the handler run again", r.status, r.header)
	}
	if r := s.do("POST", "/orders", "key-1", "{}"); r.header.Get(idempotency.HeaderReplayed) != "true" {
		t.Fatalf("third request not replayed: %d %v", r.status, r.header)
	}
	s.wantCalls(2)
}

// waitFor polls cond for up to 10 s.
func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not reached within 10 s")
		}
		time.Sleep(2 * time.Millisecond)
	}
}
