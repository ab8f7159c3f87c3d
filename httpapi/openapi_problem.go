package httpapi

import (
	"net/http"
	"strings"

	"github.com/factum-go/factum"
	"github.com/getkin/kin-openapi/openapi3"
)

// mediaProblem is the media type of an RFC 9457 problem document, which
// the Idempotency-Key middleware answers its refusals with.
const mediaProblem = "application/problem+json"

// The problem types of the Idempotency-Key middleware (the Problem*
// constants of package idempotency), named here so the document does not
// depend on the middleware's package.
const (
	problemPrefix         = "urn:factum:idempotency:"
	problemKeyMissing     = problemPrefix + "key-missing"
	problemKeyInvalid     = problemPrefix + "key-invalid"
	problemBadRequest     = problemPrefix + "bad-request"
	problemInProgress     = problemPrefix + "in-progress"
	problemFailed         = problemPrefix + "failed"
	problemBodyTooLarge   = problemPrefix + "request-too-large"
	problemKeyReused      = problemPrefix + "key-reused"
	problemStoredResponse = problemPrefix + "stored-response-unreadable"
	problemUnavailable    = problemPrefix + "store-unavailable"
	problemBodyNotStored  = problemPrefix + "response-not-stored"
)

// headerRetryAfter says when to try again, in whole seconds.
const headerRetryAfter = "Retry-After"

// problemExample is a problem document the middleware sends.
type problemExample struct{ typ, title, detail string }

// retryAfterHeader says whether a refusal carries Retry-After.
type retryAfterHeader int

const (
	retryAfterNever retryAfterHeader = iota
	retryAfterSometimes
	retryAfterAlways
)

// commandRefusal is an error status of the command routes, where the
// Idempotency-Key middleware (Config.CommandMiddleware; factum serve
// installs it) answers before the handler and a clustered command bus may
// be unreachable. Its answers are the handler's Error body (errorBody, an
// example; nil when the handler never sends the status), the middleware's
// problem documents, or either.
type commandRefusal struct {
	name       string
	status     int
	desc       string
	problems   []problemExample
	errorBody  map[string]any
	retryAfter retryAfterHeader
}

var commandRefusals = []commandRefusal{
	{"CommandBadRequest", http.StatusBadRequest,
		"The request is malformed: an Error body (codes BadRequest, IllegalArgument, CommandValidation), or a problem document " +
			"of the Idempotency-Key middleware (" + problemKeyMissing + ", " + problemKeyInvalid + ", " + problemBadRequest + ").",
		[]problemExample{
			{problemKeyMissing, "Idempotency-Key missing", "this request must carry an Idempotency-Key header"},
			{problemKeyInvalid, "Idempotency-Key invalid", "send exactly one Idempotency-Key header"},
			{problemBadRequest, "Request cannot be scoped", "the tenant or operation of this request is not usable as a key scope"},
		},
		map[string]any{"code": string(factum.CodeIllegalArgument), "message": "Command-Aggregate-Version: not a number"}, retryAfterNever},
	{"CommandConflict", http.StatusConflict,
		"A version, request-ID or creation conflict, or a broken business rule: an Error body (codes IllegalState, DuplicateRequestId, " +
			"EventVersionConflict, DuplicateAggregateId, CommandExpectVersionConflict, SourcingVersionConflict). Or a problem document: " +
			problemInProgress + " while the first request with the Idempotency-Key still runs (with Retry-After), " +
			problemFailed + " when it failed for good.",
		[]problemExample{
			{problemInProgress, "Request in progress", "a request with this Idempotency-Key is being processed; retry in 5 s"},
			{problemFailed, "Request failed", "the request with this Idempotency-Key failed for good; use a new key to try again"},
		},
		map[string]any{"code": string(factum.CodeCommandExpectVersionConflict), "message": "command expects version 1, aggregate is at 2"}, retryAfterSometimes},
	{"CommandPayloadTooLarge", http.StatusRequestEntityTooLarge,
		"The body is larger than the server accepts: an Error body, or the problem document " + problemBodyTooLarge + ".",
		[]problemExample{{problemBodyTooLarge, "Request body too large", "requests with an Idempotency-Key may carry at most 1048576 bytes"}},
		map[string]any{"code": string(factum.CodeBadRequest), "message": "request body too large"}, retryAfterNever},
	{"IdempotencyKeyReused", http.StatusUnprocessableEntity,
		"The Idempotency-Key was used for a request with another payload (" + problemKeyReused + "): use a new key for a new request.",
		[]problemExample{{problemKeyReused, "Idempotency-Key reused", "this Idempotency-Key was used for a different request; use a new key for a new request"}},
		nil, retryAfterNever},
	{"CommandInternalServerError", http.StatusInternalServerError,
		"A fault on the server: an Error body, or the problem document " + problemStoredResponse +
			" when the request with the Idempotency-Key was processed but its stored answer cannot be read.",
		[]problemExample{{problemStoredResponse, "Stored response unreadable", "the request with this Idempotency-Key was processed, but its stored response cannot be read"}},
		map[string]any{"code": string(factum.CodeInternalServerError), "message": "internal server error"}, retryAfterNever},
	{"CommandServiceUnavailable", http.StatusServiceUnavailable,
		"The command was not run; retry after Retry-After seconds. An Error body (code TooManyRequests, retryable) when a clustered " +
			"service cannot reach NATS or the owner of the aggregate's partition, or the problem document " + problemUnavailable +
			" when the Idempotency-Key cannot be checked.",
		[]problemExample{{problemUnavailable, "Idempotency store unavailable", "the request was not run because its Idempotency-Key could not be checked"}},
		map[string]any{"code": string(factum.CodeTooManyRequests), "message": "the command bus cannot reach the owner of the aggregate's partition", "retryable": true},
		retryAfterAlways},
}

// problemComponents adds the Problem schema and the command routes'
// refusals (commandRefusals) to the components.
func (b *docBuilder) problemComponents() {
	typ := openapi3.NewStringSchema().WithMinLength(1)
	typ.Description = "A URI naming the problem; clients branch on it, not on the text (" + problemPrefix + "…)."
	status := openapi3.NewIntegerSchema().WithMin(100).WithMax(599)
	status.Description = "The HTTP status of the answer."
	problem := openapi3.NewObjectSchema().
		WithProperty("type", typ).
		WithProperty("title", openapi3.NewStringSchema().WithMinLength(1)).
		WithProperty("status", status).
		WithProperty("detail", openapi3.NewStringSchema()).
		WithRequired([]string{"type", "title", "status"})
	problem.Description = "An RFC 9457 problem document: the refusals of the Idempotency-Key middleware."
	problemRef := b.sc.Add("Problem", problem)

	for _, r := range commandRefusals {
		resp := openapi3.NewResponse().WithDescription(r.desc)
		resp.Content = openapi3.Content{}
		if r.errorBody != nil {
			resp.Content["application/json"] = &openapi3.MediaType{Schema: b.errRef, Example: r.errorBody}
		}
		examples := openapi3.Examples{}
		for _, p := range r.problems {
			examples[strings.TrimPrefix(p.typ, problemPrefix)] = &openapi3.ExampleRef{Value: openapi3.NewExample(map[string]any{
				"type": p.typ, "title": p.title, "status": r.status, "detail": p.detail,
			})}
		}
		resp.Content[mediaProblem] = &openapi3.MediaType{Schema: problemRef, Examples: examples}
		if r.retryAfter != retryAfterNever {
			h := &openapi3.Header{Parameter: openapi3.Parameter{
				Description: "When to try again, in whole seconds.",
				Required:    r.retryAfter == retryAfterAlways,
				Schema:      openapi3.NewSchemaRef("", openapi3.NewIntegerSchema().WithMin(1)),
			}}
			resp.Headers = openapi3.Headers{headerRetryAfter: &openapi3.HeaderRef{Value: h}}
		}
		b.doc.Components.Responses[r.name] = &openapi3.ResponseRef{Value: resp}
	}
}

// withCommandRefusals sets the command routes' refusals in rs, a command
// route's responses, in place of the shared error responses of their
// statuses.
func (b *docBuilder) withCommandRefusals(rs *openapi3.Responses) *openapi3.Responses {
	for _, r := range commandRefusals {
		rs.Set(statusKey(r.status), &openapi3.ResponseRef{Ref: "#/components/responses/" + r.name, Value: b.doc.Components.Responses[r.name].Value})
	}
	return rs
}
