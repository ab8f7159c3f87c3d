package idempotency

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/factum-go/factum"
)

// Middleware makes unsafe HTTP requests idempotent with the
// Idempotency-Key header, over a Store.
//
// The first request with a key runs the handler; its response (status,
// ReplayHeaders, body) is stored when Keep says it is final, and every
// later request with the same key and payload gets it back with
// Idempotent-Replayed: true, without running the handler. A request with
// the same key while the first one runs gets 409 with Retry-After; with
// the same key and another payload (even after the first finished), 422;
// without a key where one is required, 400. A handler that panics or
// answers a status Keep refuses (5xx by default) releases the key, so a
// retry runs it again. Errors are application/problem+json bodies with
// the Problem* types. When the store cannot be reached the request is
// refused with 503 rather than run unprotected.
type Middleware struct {
	store Store
	opts  MiddlewareOptions
	keep  []string
}

// NewMiddleware returns a middleware over store. It fails with an
// IllegalArgument error for a nil store or negative limits.
func NewMiddleware(store Store, opts MiddlewareOptions) (*Middleware, error) {
	if store == nil {
		return nil, factum.IllegalArgument("idempotency: middleware needs a store")
	}
	if opts.MaxRequestBytes < 0 || opts.MaxResponseBytes < 0 || opts.StoreTimeout < 0 || opts.RenewEvery < 0 {
		return nil, factum.IllegalArgument("idempotency: middleware limits, timeouts and intervals must not be negative")
	}
	if opts.Methods == nil {
		opts.Methods = DefaultMethods
	}
	if opts.Tenant == nil {
		opts.Tenant = DefaultTenant
	}
	if opts.Operation == nil {
		opts.Operation = DefaultOperation
	}
	if opts.Fingerprint == nil {
		opts.Fingerprint = DefaultFingerprint
	}
	if opts.MaxRequestBytes == 0 {
		opts.MaxRequestBytes = DefaultMaxRequestBytes
	}
	if opts.MaxResponseBytes == 0 {
		opts.MaxResponseBytes = DefaultMaxResponseBytes
	}
	if opts.ReplayHeaders == nil {
		opts.ReplayHeaders = DefaultReplayHeaders
	}
	if opts.Keep == nil {
		opts.Keep = DefaultKeep
	}
	if opts.StoreTimeout == 0 {
		opts.StoreTimeout = DefaultStoreTimeout
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	m := &Middleware{store: store, opts: opts}
	for _, h := range opts.ReplayHeaders {
		m.keep = append(m.keep, http.CanonicalHeaderKey(h))
	}
	return m, nil
}

// Wrap returns next protected by the middleware.
func (m *Middleware) Wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { m.serve(w, r, next) })
}

func (m *Middleware) serve(w http.ResponseWriter, r *http.Request, next http.Handler) {
	if !slices.Contains(m.opts.Methods, r.Method) {
		next.ServeHTTP(w, r)
		return
	}
	k, fp, body, ok := m.prepare(w, r)
	if !ok {
		return
	}
	if k.Value == "" { // no key, and none required
		next.ServeHTTP(w, r)
		return
	}
	rec, created, err := m.store.Begin(r.Context(), k, fp)
	switch {
	case err == nil && created:
		m.run(w, r, next, k, fp, body, rec)
	case err == nil:
		m.replay(w, r, k, rec)
	case errors.Is(err, ErrConflict):
		writeProblem(w, Problem{Type: ProblemKeyReused, Title: "Idempotency-Key reused", Status: http.StatusUnprocessableEntity,
			Detail: "this Idempotency-Key was used for a different request; use a new key for a new request"}, 0)
	case errors.Is(err, ErrInProgress):
		wait := retryAfter(rec.ExpiresAt)
		writeProblem(w, Problem{Type: ProblemInProgress, Title: "Request in progress", Status: http.StatusConflict,
			Detail: fmt.Sprintf("a request with this Idempotency-Key is being processed; retry in %d s", wait)}, wait)
	case r.Context().Err() != nil:
		// The client has gone before anything was claimed for it.
	default:
		m.opts.Logger.ErrorContext(r.Context(), "idempotency: begin", "key", k.String(), "error", err)
		writeProblem(w, Problem{Type: ProblemUnavailable, Title: "Idempotency store unavailable", Status: http.StatusServiceUnavailable,
			Detail: "the request was not run because its Idempotency-Key could not be checked"}, 1)
	}
}

// prepare reads the key, the tenant, the operation and the body, and
// fingerprints the request. ok is false when it has answered the request
// itself; a zero k.Value means the request has no key and needs none.
func (m *Middleware) prepare(w http.ResponseWriter, r *http.Request) (k Key, fp string, body []byte, ok bool) {
	bad := func(typ, title, detail string) (Key, string, []byte, bool) {
		writeProblem(w, Problem{Type: typ, Title: title, Status: http.StatusBadRequest, Detail: detail}, 0)
		return Key{}, "", nil, false
	}
	values := r.Header.Values(HeaderKey)
	switch {
	case len(values) == 0 && m.opts.Required:
		return bad(ProblemKeyMissing, "Idempotency-Key missing", "this request must carry an Idempotency-Key header")
	case len(values) == 0:
		return Key{}, "", nil, true
	case len(values) > 1:
		return bad(ProblemKeyInvalid, "Idempotency-Key invalid", "send exactly one Idempotency-Key header")
	}
	value, err := parseKey(values[0])
	if err == nil {
		err = checkText("Idempotency-Key", value, MaxValueLen, ErrKeyInvalid)
	}
	if err != nil || value == "" {
		return bad(ProblemKeyInvalid, "Idempotency-Key invalid",
			fmt.Sprintf("an Idempotency-Key is 1 to %d bytes of text without control characters, bare or as a structured-field string", MaxValueLen))
	}
	tenant, err := m.opts.Tenant(r)
	if err != nil {
		return bad(ProblemBadRequest, "Tenant unknown", "the tenant of this request could not be determined")
	}
	op := m.opts.Operation(r)
	if m.opts.Principal != nil {
		principal, err := m.opts.Principal(r)
		if err != nil {
			return bad(ProblemBadRequest, "Principal unknown", "the caller of this request could not be determined")
		}
		op = principalOperation(principal, op)
	}
	k = Key{Tenant: tenant, Operation: op, Value: value}
	if err := k.Validate(); err != nil {
		return bad(ProblemBadRequest, "Request cannot be scoped", "the tenant or operation of this request is not usable as a key scope")
	}
	body, err = io.ReadAll(io.LimitReader(r.Body, m.opts.MaxRequestBytes+1))
	if err != nil {
		return bad(ProblemBadRequest, "Request body unreadable", "the request body could not be read")
	}
	if int64(len(body)) > m.opts.MaxRequestBytes {
		writeProblem(w, Problem{Type: ProblemBodyTooLarge, Title: "Request body too large", Status: http.StatusRequestEntityTooLarge,
			Detail: fmt.Sprintf("requests with an Idempotency-Key may carry at most %d bytes", m.opts.MaxRequestBytes)}, 0)
		return Key{}, "", nil, false
	}
	fp, err = m.opts.Fingerprint(r, body)
	if err == nil {
		err = ValidateFingerprint(fp)
	}
	if err != nil {
		return bad(ProblemBadRequest, "Request cannot be fingerprinted", "the request could not be fingerprinted")
	}
	return k, fp, body, true
}

// parseKey accepts the draft's form, a structured-field string
// ("quoted", RFC 8941), and the bare form most clients send.
func parseKey(v string) (string, error) {
	if len(v) < 2 || v[0] != '"' || v[len(v)-1] != '"' {
		return v, nil
	}
	inner := v[1 : len(v)-1]
	var b strings.Builder
	for i := 0; i < len(inner); i++ {
		c := inner[i]
		switch {
		case c == '\\' && i+1 < len(inner) && (inner[i+1] == '"' || inner[i+1] == '\\'):
			i++
			b.WriteByte(inner[i])
		case c == '\\' || c == '"' || c < 0x20 || c > 0x7e:
			return "", errors.New("a quoted Idempotency-Key must be a structured-field string (RFC 8941)")
		default:
			b.WriteByte(c)
		}
	}
	return b.String(), nil
}

// retryAfter is the whole seconds until t, at least 1.
func retryAfter(t time.Time) int {
	s := math.Ceil(time.Until(t).Seconds())
	if s < 1 {
		return 1
	}
	if s > math.MaxInt32 {
		return math.MaxInt32
	}
	return int(s)
}

// storeContext is the context of store calls made after the handler ran:
// it keeps the request's values but not its cancellation.
func (m *Middleware) storeContext(r *http.Request) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.WithoutCancel(r.Context()), m.opts.StoreTimeout)
}

// run executes the handler as the key's owner and records the outcome.
func (m *Middleware) run(w http.ResponseWriter, r *http.Request, next http.Handler, k Key, fp string, body []byte, rec Record) {
	ctx, cancel := context.WithCancelCause(r.Context())
	defer cancel(nil)
	stopRenew := m.renew(r, k, fp, rec.Attempt, cancel)
	r = r.WithContext(withKey(ctx, k))
	r.Body = io.NopCloser(bytes.NewReader(body))
	c := &capture{w: w, keep: m.keep, limit: m.opts.MaxResponseBytes}
	finished := false
	defer func() {
		stopRenew()
		if !finished {
			// The handler panicked (or called runtime.Goexit). Release the
			// key without recovering, so the panic goes on, with its own
			// stack, to the server, which logs it and drops the connection.
			m.fail(r, k, fp, rec.Attempt)
		}
	}()
	next.ServeHTTP(c, r)
	finished = true
	stopRenew()
	res := c.result()
	if !m.opts.Keep(res.status) {
		m.fail(r, k, fp, rec.Attempt)
		return
	}
	sctx, scancel := m.storeContext(r)
	defer scancel()
	if err := m.store.Complete(sctx, k, fp, rec.Attempt, res.encode()); err != nil {
		// The client has its response; only duplicates lose their replay
		// (they will run the handler again once the lease ends).
		m.opts.Logger.ErrorContext(r.Context(), "idempotency: complete", "key", k.String(), "error", err)
	}
}

// fail releases the key after a response that is not final.
func (m *Middleware) fail(r *http.Request, k Key, fp string, attempt uint64) {
	ctx, cancel := m.storeContext(r)
	defer cancel()
	if err := m.store.Fail(ctx, k, fp, attempt, true); err != nil {
		m.opts.Logger.ErrorContext(r.Context(), "idempotency: release", "key", k.String(), "error", err)
	}
}

// renew keeps the lease alive while the handler runs, if configured, and
// cancels the handler's context with the reason when the key is lost. The
// returned function stops it and waits for it; it may be called twice.
func (m *Middleware) renew(r *http.Request, k Key, fp string, attempt uint64, cancel context.CancelCauseFunc) func() {
	if m.opts.RenewEvery <= 0 {
		return func() {}
	}
	stop, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(m.opts.RenewEvery)
		defer t.Stop()
		for {
			select {
			case <-stop:
				return
			case <-t.C:
			}
			ctx, cancelCall := m.storeContext(r)
			_, err := m.store.Renew(ctx, k, fp, attempt)
			cancelCall()
			switch {
			case errors.Is(err, ErrStaleAttempt), errors.Is(err, ErrLeaseExpired), errors.Is(err, ErrConflict):
				m.opts.Logger.WarnContext(r.Context(), "idempotency: lease lost while the handler ran", "key", k.String(), "error", err)
				cancel(err)
				return
			case err != nil:
				m.opts.Logger.ErrorContext(r.Context(), "idempotency: renew", "key", k.String(), "error", err)
			}
		}
	}()
	stopped := false
	return func() {
		if !stopped {
			stopped = true
			close(stop)
			<-done
		}
	}
}

// replay answers a duplicate with the stored outcome.
func (m *Middleware) replay(w http.ResponseWriter, r *http.Request, k Key, rec Record) {
	if rec.State == StateFailed {
		writeProblem(w, Problem{Type: ProblemFailed, Title: "Request failed", Status: http.StatusConflict,
			Detail: "the request with this Idempotency-Key failed for good; use a new key to try again"}, 0)
		return
	}
	res, err := decodeResponse(rec.Response)
	if err != nil {
		m.opts.Logger.ErrorContext(r.Context(), "idempotency: replay", "key", k.String(), "error", err)
		writeProblem(w, Problem{Type: ProblemStoredResponse, Title: "Stored response unreadable", Status: http.StatusInternalServerError,
			Detail: "the request with this Idempotency-Key was processed, but its stored response cannot be read"}, 0)
		return
	}
	h := w.Header()
	for name, vs := range res.header {
		h[name] = vs
	}
	h.Set(HeaderReplayed, "true")
	if res.omitted > 0 {
		h.Set(HeaderBodyOmitted, "true")
		writeProblem(w, Problem{Type: ProblemBodyNotStored, Title: "Response body not stored", Status: res.status,
			Detail: fmt.Sprintf("the request was processed; its %d-byte response body exceeded the replay limit", res.omitted)}, 0)
		return
	}
	w.WriteHeader(res.status)
	w.Write(res.body)
}
