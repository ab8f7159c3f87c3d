package httpapi

import (
	"github.com/factum-go/factum/auth"
	"net/http"
	"reflect"
	"slices"
	"time"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/compensation"
	"github.com/factum-go/factum/query"
	"github.com/getkin/kin-openapi/openapi3"
)

// The security schemes the document declares. Authentication itself is
// the server's middleware; the document says which credentials an
// operation takes and which role (send, read, operator) it needs.
const (
	securityAPIKey = "apiKey"
	securityBearer = "bearerJwt"
	// HeaderAPIKey carries an API key: auth.HeaderAPIKey, which the
	// authenticator reads.
	HeaderAPIKey = auth.HeaderAPIKey
)

// The roles an operation needs, recorded as the x-factum-role extension.
const (
	roleSend     = "send"
	roleRead     = "read"
	roleOperator = "operator"
	roleAdmin    = "admin"
)

// errorResponse is one error status of the document.
type errorResponse struct {
	name   string
	status int
	code   factum.Code
	desc   string
}

var errorResponses = []errorResponse{
	{"BadRequest", http.StatusBadRequest, factum.CodeIllegalArgument, "The request is malformed: a bad path segment, header or body (codes BadRequest, IllegalArgument, CommandValidation)."},
	{"Unauthorized", http.StatusUnauthorized, factum.CodeBadRequest, "No valid credential (when the server requires one)."},
	// Another tenant's aggregate is a 404 on every route (a 403 would
	// confirm that it exists), so the 403 names only roles and owners.
	{"Forbidden", http.StatusForbidden, factum.CodeForbidden, "The credential lacks the route's role, or the aggregate belongs to another owner (codes Forbidden, IllegalAccessOwnerAggregate)."},
	{"NotFound", http.StatusNotFound, factum.CodeNotFound, "No such route, aggregate, version, request or execution."},
	{"RequestTimeout", http.StatusRequestTimeout, factum.CodeRequestTimeout, "The wait ended before the stage: the outcome is unknown; look the request up."},
	{"Conflict", http.StatusConflict, factum.CodeCommandExpectVersionConflict, "A version, request-ID or creation conflict, or a broken business rule (codes IllegalState, DuplicateRequestId, EventVersionConflict, DuplicateAggregateId, CommandExpectVersionConflict, SourcingVersionConflict)."},
	{"Gone", http.StatusGone, factum.CodeIllegalAccessDeletedAggregate, "The aggregate is deleted."},
	{"PayloadTooLarge", http.StatusRequestEntityTooLarge, factum.CodeBadRequest, "The body is larger than the server accepts."},
	{"TooManyRequests", http.StatusTooManyRequests, factum.CodeTooManyRequests, "Back-pressure or a draining server: retry later."},
	{"InternalServerError", http.StatusInternalServerError, factum.CodeInternalServerError, "A fault on the server."},
	{"ServiceUnavailable", http.StatusServiceUnavailable, factum.CodeTooManyRequests, "The service does not accept work (starting or draining), or, clustered, cannot reach NATS or the owner of the aggregate's partition: the command was not accepted and may be sent again after Retry-After."},
}

// The error statuses of each kind of operation.
var (
	commandErrors      = []int{400, 401, 403, 404, 408, 409, 410, 413, 429, 500, 503}
	readErrors         = []int{400, 401, 403, 404, 429, 500}
	queryErrors        = []int{400, 401, 403, 404, 413, 429, 500}
	compensationErrors = []int{400, 401, 403, 404, 409, 413, 429, 500}
)

// enums are the string types whose values the document lists.
func (b *docBuilder) enums() {
	strs := func(vs ...string) []any {
		out := make([]any, len(vs))
		for i, v := range vs {
			out[i] = v
		}
		return out
	}
	codes := make([]string, len(factum.Codes))
	for i, c := range factum.Codes {
		codes[i] = string(c)
	}
	stages := make([]string, len(factum.Stages))
	for i, s := range factum.Stages {
		stages[i] = s.String()
	}
	ops := make([]string, 0, len(query.Operators()))
	for _, o := range query.Operators() {
		ops = append(ops, string(o))
	}
	enum := func(desc string, vs ...string) *openapi3.Schema {
		s := openapi3.NewStringSchema().WithEnum(strs(vs...)...)
		s.Description = desc
		return s
	}
	b.codeRef = b.sc.OverrideRef("factum.Code", reflect.TypeFor[factum.Code](), enum("The stable error code; its HTTP status follows from it.", codes...))
	b.stageRef = b.sc.OverrideRef("factum.CommandStage", reflect.TypeFor[factum.CommandStage](), enum("A stage a caller can wait for.", stages...))
	b.sc.OverrideRef("query.Operator", reflect.TypeFor[query.Operator](), enum("What a condition tests.", ops...))
	b.sc.OverrideRef("query.Direction", reflect.TypeFor[query.Direction](), enum("A sort direction.", string(query.Asc), string(query.Desc)))
	b.sc.OverrideRef("compensation.Status", reflect.TypeFor[compensation.Status](), enum("Where an execution stands.",
		string(compensation.StatusFailed), string(compensation.StatusPrepared), string(compensation.StatusSucceeded)))
	b.recoverRef = b.sc.OverrideRef("compensation.Recoverability", reflect.TypeFor[compensation.Recoverability](), enum("Whether retrying may help.",
		string(compensation.Recoverable), string(compensation.Unrecoverable), string(compensation.RecoverabilityUnknown)))
	b.sc.OverrideRef("compensation.Outcome", reflect.TypeFor[compensation.Outcome](), enum("How a retry ended.",
		string(compensation.OutcomeSucceeded), string(compensation.OutcomeFailed), string(compensation.OutcomeSkipped)))

	ms := openapi3.NewInt64Schema()
	ms.Description = "Epoch milliseconds (0: never); compensation keeps its times in the form its queries compare."
	b.sc.Override(reflect.TypeFor[compensation.Time](), ms)
	ns := openapi3.NewInt64Schema()
	ns.Description = "Nanoseconds."
	b.sc.Override(reflect.TypeFor[time.Duration](), ns)
	ts := openapi3.NewDateTimeSchema()
	ts.Description = "RFC 3339 in UTC with milliseconds."
	ts.Example = "2026-01-02T15:04:05.000Z"
	b.sc.Override(reflect.TypeFor[Timestamp](), ts)
	spec := openapi3.NewObjectSchema().
		WithProperty("maxRetries", openapi3.NewIntegerSchema().WithMin(0)).
		WithProperty("minBackoffMs", openapi3.NewInt64Schema().WithMin(1)).
		WithProperty("executionTimeoutMs", openapi3.NewInt64Schema().WithMin(1)).
		WithRequired([]string{"maxRetries", "minBackoffMs", "executionTimeoutMs"})
	spec.Description = "A retry policy, durations in milliseconds."
	b.sc.OverrideRef("compensation.RetrySpec", reflect.TypeFor[compensation.RetrySpec](), spec)
}

// components adds the shared error responses, parameters, headers and
// security schemes.
func (b *docBuilder) components() {
	c := b.doc.Components
	errRef := b.sc.Define("Error", reflect.TypeFor[ErrorBody]())
	b.errRef = errRef
	c.Responses = openapi3.ResponseBodies{}
	for _, e := range errorResponses {
		example := map[string]any{"code": string(e.code), "message": e.desc}
		resp := openapi3.NewResponse().WithDescription(e.desc)
		resp.Content = openapi3.Content{"application/json": &openapi3.MediaType{Schema: errRef, Example: example}}
		c.Responses[e.name] = &openapi3.ResponseRef{Value: resp}
	}

	str := openapi3.NewStringSchema
	idLen := func() *openapi3.Schema { return str().WithMinLength(1).WithMaxLength(factum.MaxIDLen) }
	version := func() *openapi3.Schema { return openapi3.NewIntegerSchema().WithMin(1) }
	path := func(name, desc string, s *openapi3.Schema, example any) {
		p := openapi3.NewPathParameter(name).WithDescription(desc).WithSchema(s)
		p.Example = example
		c.Parameters[name] = &openapi3.ParameterRef{Value: p}
	}
	c.Parameters = openapi3.ParametersMap{}
	path("id", "The aggregate ID.", idLen(), "cart-1")
	path("version", "An aggregate version.", version(), 1)
	path("time", "RFC 3339 (2026-01-02T15:04:05Z) or Unix milliseconds.", str(), "2026-01-02T15:04:05Z")
	path("from", "The first version.", version(), 1)
	path("to", "The last version.", version(), 10)
	path("requestId", "The request ID.", idLen(), "req-1")
	path("tenant", "The tenant the request acts in.", str().WithMinLength(1).WithMaxLength(factum.MaxTenantLen), "acme")
	path("executionId", "The execution's aggregate ID.", idLen(), "exec-1")

	header := func(name, desc string, s *openapi3.Schema, example any) {
		p := openapi3.NewHeaderParameter(name).WithDescription(desc).WithSchema(s)
		p.Example = example
		c.Parameters[name] = &openapi3.ParameterRef{Value: p}
	}
	stage := openapi3.NewSchemaRef(b.stageRef.Ref, b.stageRef.Value)
	stageParam := openapi3.NewHeaderParameter(HeaderWaitStage).WithDescription("The stage to wait for (default PROCESSED).")
	stageParam.Schema = stage
	stageParam.Example = "SNAPSHOT"
	c.Parameters[HeaderWaitStage] = &openapi3.ParameterRef{Value: stageParam}
	header(HeaderRequestID, "The business intent; a retry reuses it and gets the first attempt's outcome. Default: the command ID.", idLen(), "req-1")
	header(HeaderAggregateVersion, "The version the aggregate must be at; a mismatch is 409 CommandExpectVersionConflict.", openapi3.NewIntegerSchema().WithMin(0), 1)
	header(HeaderWaitContext, "Restricts a branch-stage wait to functions of this bounded context.", str(), "shop")
	header(HeaderWaitProcessor, "Restricts a branch-stage wait to functions of this processor.", str(), "snapshot")
	header(HeaderWaitFunction, "Restricts a branch-stage wait to functions of this name.", str(), "cart")
	header(HeaderWaitTimeout, "Wait timeout: milliseconds or a duration such as 5s, at most "+b.h.cfg.MaxWaitTimeout.String()+".", str().WithPattern(`^[0-9]+(\.[0-9]+)?(ns|us|µs|ms|s|m|h)?$`), "5s")
	header(headerIdempotencyKey, "Makes the request idempotent: the first answer is stored and replayed to a request with the same key.", str().WithMinLength(1).WithMaxLength(255), "8e03978e-40d5-43e8-bc93-6894a57f9324")
	header(HeaderOperator, "The operator acting, recorded for audit.", str().WithMaxLength(256), "alice")

	c.Headers = openapi3.Headers{}
	resHeader := func(name, desc string, s *openapi3.Schema) {
		c.Headers[name] = &openapi3.HeaderRef{Value: &openapi3.Header{Parameter: openapi3.Parameter{Description: desc, Schema: openapi3.NewSchemaRef("", s)}}}
	}
	resHeader(HeaderCommandID, "The command's ID.", str())
	resHeader(HeaderRequestID, "The command's request ID.", str())
	resHeader(HeaderAggregateID, "The aggregate ID (derived for a create command sent without one).", str())
	resHeader(HeaderAggregateVersion, "The aggregate's version after the command, once known.", openapi3.NewIntegerSchema().WithMin(1))
	resHeader(HeaderServerTiming, "The server's own time for the command: app;dur=<milliseconds>.", str())
	resHeader(headerIdempotentReplayed, "true on an answer replayed for an Idempotency-Key.", str().WithEnum("true"))

	c.SecuritySchemes = openapi3.SecuritySchemes{
		securityAPIKey: &openapi3.SecuritySchemeRef{Value: openapi3.NewSecurityScheme().WithType("apiKey").WithIn("header").WithName(HeaderAPIKey).
			WithDescription("An API key (also accepted as Authorization: Bearer <key>).")},
		securityBearer: &openapi3.SecuritySchemeRef{Value: openapi3.NewJWTSecurityScheme().
			WithDescription("A JWT whose claims carry the principal, its tenants and roles (send, read, operator, admin).")},
	}
}

// The idempotency middleware's headers, named here so the document does
// not depend on the middleware's package.
const (
	headerIdempotencyKey     = "Idempotency-Key"
	headerIdempotentReplayed = "Idempotent-Replayed"
)

// responses returns 200 with ok and the error statuses, each a reference
// to a shared error response.
func (b *docBuilder) responses(ok *openapi3.Response, statuses []int) *openapi3.Responses {
	r := openapi3.NewResponses()
	r.Set("200", &openapi3.ResponseRef{Value: ok})
	for _, e := range errorResponses {
		if slices.Contains(statuses, e.status) {
			r.Set(statusKey(e.status), &openapi3.ResponseRef{Ref: "#/components/responses/" + e.name, Value: b.doc.Components.Responses[e.name].Value})
		}
	}
	return r
}

func statusKey(s int) string {
	const digits = "0123456789"
	return string([]byte{digits[s/100], digits[s/10%10], digits[s%10]})
}

// jsonOK is a 200 answer with a JSON body.
func jsonOK(desc string, s *openapi3.SchemaRef, example any) *openapi3.Response {
	r := openapi3.NewResponse().WithDescription(desc)
	r.Content = openapi3.Content{"application/json": &openapi3.MediaType{Schema: s, Example: example}}
	return r
}

// param returns a reference to a shared parameter.
func (b *docBuilder) param(name string) *openapi3.ParameterRef {
	return &openapi3.ParameterRef{Ref: "#/components/parameters/" + name, Value: b.doc.Components.Parameters[name].Value}
}

func (b *docBuilder) params(names ...string) openapi3.Parameters {
	out := make(openapi3.Parameters, 0, len(names))
	for _, n := range names {
		out = append(out, b.param(n))
	}
	return out
}

// secure sets the operation's credentials and the role it needs.
func secure(op *openapi3.Operation, role string) {
	op.Security = openapi3.NewSecurityRequirements().
		With(openapi3.NewSecurityRequirement().Authenticate(securityAPIKey)).
		With(openapi3.NewSecurityRequirement().Authenticate(securityBearer))
	if op.Extensions == nil {
		op.Extensions = map[string]any{}
	}
	op.Extensions["x-factum-role"] = role
}

// exampleResult is the example of a command's answer.
func exampleResult(stage factum.CommandStage) map[string]any {
	return map[string]any{
		"stage": stage.String(), "commandId": "0199a8e0-8c3e-7c4e-a1a3-6f1c2b3d4e5f", "requestId": "req-1",
		"aggregateId":      map[string]any{"context": "shop", "aggregate": "cart", "id": "cart-1", "tenant": factum.DefaultTenant},
		"aggregateVersion": 1, "eventNames": []any{"item_added"}, "errorCode": string(factum.CodeOk),
		"signalTime": "2026-01-02T15:04:05.123Z",
	}
}
