package httpapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/compensation"
	"github.com/factum-go/factum/query"
)

// compensationSegment is the first path segment of the compensation
// routes; like "tenant", it cannot be an aggregate name in URLs.
const compensationSegment = "compensation"

// compensationRoutes returns the mux of the operator routes over failed
// event-function executions, each scoped to the request's tenant.
func (h *Handler) compensationRoutes() *http.ServeMux {
	m := http.NewServeMux()
	m.HandleFunc("GET /compensation/executions", h.listExecutions)
	m.HandleFunc("GET /compensation/executions/{id}", h.getExecution)
	m.HandleFunc("POST /compensation/executions/{id}/retry", h.retryExecution)
	m.HandleFunc("PUT /compensation/executions/{id}/retry-spec", changeExecution(h, putRetrySpec))
	m.HandleFunc("PUT /compensation/executions/{id}/recoverable", changeExecution(h, putRecoverable))
	m.HandleFunc("PUT /compensation/executions/{id}/function", changeExecution(h, putFunction))
	m.HandleFunc("GET /compensation/counts", h.getCounts)
	m.HandleFunc("/", h.notFound)
	return m
}

// compensation returns the service scoped to the request's tenant.
func (h *Handler) compensation(r *http.Request) (*compensation.Service, error) {
	return h.cfg.Compensation.ForTenant(tenantOf(r))
}

// listExecutions serves GET /compensation/executions: a page of executions
// filtered by the query parameters status, recoverable (comma lists),
// context, processor, function, aggregate, aggregateId, eventId,
// needsOperator, page (from 1) and size.
func (h *Handler) listExecutions(w http.ResponseWriter, r *http.Request) {
	svc, err := h.compensation(r)
	if err != nil {
		writeError(w, err)
		return
	}
	f, page, err := executionFilter(r)
	if err != nil {
		writeError(w, err)
		return
	}
	res, err := svc.Paged(r.Context(), f, page)
	if err != nil {
		writeError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, res)
}

func executionFilter(r *http.Request) (compensation.Filter, query.Pagination, error) {
	q := r.URL.Query()
	var f compensation.Filter
	for _, s := range splitList(q.Get("status")) {
		f.Status = append(f.Status, compensation.Status(strings.ToUpper(s)))
	}
	for _, s := range splitList(q.Get("recoverable")) {
		rec, err := compensation.ParseRecoverability(s)
		if err != nil {
			return f, query.Pagination{}, err
		}
		f.Recoverability = append(f.Recoverability, rec)
	}
	f.Function = factum.Function{Context: q.Get("context"), Processor: q.Get("processor"), Name: q.Get("function")}
	if a := q.Get("aggregate"); a != "" {
		ctxName, name, ok := strings.Cut(a, ".")
		if !ok {
			ctxName, name = "", a
		}
		f.Aggregate = factum.NamedAggregate{Context: ctxName, Aggregate: name}
	}
	f.AggregateID, f.EventID = q.Get("aggregateId"), q.Get("eventId")
	if c := strings.TrimSpace(q.Get("errorCode")); c != "" {
		// Codes are matched as stored; any case is accepted here.
		f.ErrorCode = factum.Code(c)
		for _, k := range factum.Codes {
			if strings.EqualFold(string(k), c) {
				f.ErrorCode = k
			}
		}
	}
	for _, t := range []struct {
		name string
		into *time.Time
	}{{"failedFrom", &f.FailedFrom}, {"failedTo", &f.FailedTo}} {
		if v := q.Get(t.name); v != "" {
			at, err := time.Parse(time.RFC3339Nano, v)
			if err == nil && at.IsZero() {
				err = errors.New("the zero time bounds nothing")
			}
			if err != nil {
				return f, query.Pagination{}, factum.IllegalArgument(fmt.Sprintf("%s %q: want an RFC 3339 time", t.name, v))
			}
			*t.into = at
		}
	}
	if v := q.Get("needsOperator"); v != "" {
		b, err := strconv.ParseBool(v)
		if err != nil {
			return f, query.Pagination{}, factum.IllegalArgument(fmt.Sprintf("needsOperator %q: want true or false", v))
		}
		f.NeedsOperator = b
	}
	page := query.Pagination{Index: 1, Size: 20}
	for _, p := range []struct {
		name string
		into *int
	}{{"page", &page.Index}, {"size", &page.Size}} {
		if v := q.Get(p.name); v != "" {
			n, ok := parseNatural(v, math.MaxInt32)
			if !ok || n < 1 {
				return f, page, factum.IllegalArgument(fmt.Sprintf("%s %q: want a positive number in decimal digits", p.name, v))
			}
			*p.into = int(n)
		}
	}
	return f, page, nil
}

func splitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// getExecution serves GET /compensation/executions/{id}: the execution
// with its history.
func (h *Handler) getExecution(w http.ResponseWriter, r *http.Request) {
	svc, err := h.compensation(r)
	if err != nil {
		writeError(w, err)
		return
	}
	d, err := svc.Get(r.Context(), r.PathValue("id"))
	if err != nil {
		writeError(w, err)
		return
	}
	d.History = withoutPositions(d.History)
	writeJSON(w, http.StatusOK, d)
}

// retryExecution serves POST /compensation/executions/{id}/retry: the
// operator's force retry, run now, whatever the retry limit; it answers the
// attempt.
func (h *Handler) retryExecution(w http.ResponseWriter, r *http.Request) {
	svc, err := h.compensation(r)
	if err != nil {
		writeError(w, err)
		return
	}
	a, err := svc.ForceRetry(operatorContext(r), r.PathValue("id"))
	if err != nil {
		writeError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, a)
}

// retrySpecBody is the JSON form of a retry spec, with durations as Go
// duration strings ("3m", "120s").
type retrySpecBody struct {
	MaxRetries       int    `json:"maxRetries"`
	MinBackoff       string `json:"minBackoff"`
	ExecutionTimeout string `json:"executionTimeout"`
}

// changeExecution returns the handler of a PUT on
// /compensation/executions/{id}: it decodes the body into a B, has change
// apply it to the execution through the service of the request's tenant,
// on behalf of the request's operator, and answers the execution as
// getExecution does.
func changeExecution[B any](h *Handler, change func(ctx context.Context, svc *compensation.Service, id string, body B) error) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		svc, err := h.compensation(r)
		if err != nil {
			writeError(w, err)
			return
		}
		var b B
		if err := h.decodeBody(w, r, &b); err != nil {
			writeError(w, err)
			return
		}
		if err := change(operatorContext(r), svc, r.PathValue("id"), b); err != nil {
			writeError(w, err)
			return
		}
		h.getExecution(w, r)
	}
}

// putRetrySpec applies PUT /compensation/executions/{id}/retry-spec.
func putRetrySpec(ctx context.Context, svc *compensation.Service, id string, b retrySpecBody) error {
	spec := compensation.RetrySpec{MaxRetries: b.MaxRetries}
	for _, d := range []struct {
		name, v string
		into    *time.Duration
	}{{"minBackoff", b.MinBackoff, &spec.MinBackoff}, {"executionTimeout", b.ExecutionTimeout, &spec.ExecutionTimeout}} {
		if d.v == "" {
			continue
		}
		var err error
		if *d.into, err = time.ParseDuration(d.v); err != nil {
			return factum.IllegalArgument(fmt.Sprintf("%s %q: want a duration such as 3m", d.name, d.v))
		}
	}
	return svc.ApplyRetrySpec(ctx, id, spec)
}

// putRecoverable applies PUT /compensation/executions/{id}/recoverable
// with a body {"recoverable": "RECOVERABLE" | "UNRECOVERABLE" | "UNKNOWN"}.
func putRecoverable(ctx context.Context, svc *compensation.Service, id string, b struct {
	Recoverable string `json:"recoverable"`
}) error {
	rec, err := compensation.ParseRecoverability(b.Recoverable)
	if err != nil {
		return err
	}
	return svc.MarkRecoverable(ctx, id, rec)
}

// putFunction applies PUT /compensation/executions/{id}/function with a
// body {"context": …, "processor": …, "name": …}: the function a retry
// re-delivers to (after a rename).
func putFunction(ctx context.Context, svc *compensation.Service, id string, fn factum.Function) error {
	return svc.ChangeFunction(ctx, id, fn)
}

// getCounts serves GET /compensation/counts: executions by status, and the
// ones waiting for an operator.
func (h *Handler) getCounts(w http.ResponseWriter, r *http.Request) {
	svc, err := h.compensation(r)
	if err != nil {
		writeError(w, err)
		return
	}
	c, err := svc.Counts(r.Context())
	if err != nil {
		writeError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, c)
}

// HeaderOperator names the operator of a compensation action, recorded as
// the owner of the execution's stream for audit.
const HeaderOperator = "Command-Operator"

func operatorContext(r *http.Request) context.Context {
	return compensation.WithOperator(r.Context(), operatorOf(r))
}

// decodeBody reads a JSON body under the size limit into v, refusing
// unknown fields.
func (h *Handler) decodeBody(w http.ResponseWriter, r *http.Request, v any) error {
	body, err := h.readBody(w, r)
	if err != nil {
		return err
	}
	dec := json.NewDecoder(strings.NewReader(string(body)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return factum.Errorf(factum.CodeBadRequest, "request body: %w", err)
	}
	return nil
}
