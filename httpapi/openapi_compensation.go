package httpapi

import (
	"net/http"
	"reflect"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/compensation"
	"github.com/factum-go/factum/query"
	"github.com/getkin/kin-openapi/openapi3"
)

// recoverableBody is the body of PUT …/recoverable.
type recoverableBody struct {
	Recoverable compensation.Recoverability `json:"recoverable"`
}

// compensationRoutes adds the operator routes under /compensation.
func (b *docBuilder) compensationRoutes() {
	const tag = compensationSegment
	pageRef := b.sc.Define("compensation.ItemPage", reflect.TypeFor[query.Paged[compensation.Item]]())
	detailRef := b.sc.Define("compensation.Detail", reflect.TypeFor[compensation.Detail]())
	b.looseHistory(b.sc.Defs["compensation.Detail"])
	attemptRef := b.sc.Define("compensation.Attempt", reflect.TypeFor[compensation.Attempt]())
	countsRef := b.sc.Define("compensation.Counts", reflect.TypeFor[compensation.Counts]())
	specRef := b.sc.Define("compensation.RetrySpecUpdate", reflect.TypeFor[retrySpecBody]())
	b.sc.Defs["compensation.RetrySpecUpdate"].Value.Description = "A new retry spec; durations are Go durations such as 3m or 120s, empty keeps the current one."
	recRef := b.sc.Define("compensation.RecoverableUpdate", reflect.TypeFor[recoverableBody]())
	fnRef := b.sc.Define("factum.Function", reflect.TypeFor[factum.Function]())

	op := func(method, path, id, summary string, ok *openapi3.Response, params openapi3.Parameters, body *openapi3.SchemaRef, example any) {
		o := openapi3.NewOperation()
		o.Tags, o.OperationID, o.Summary = []string{tag}, camel(tag, id), summary
		secure(o, roleOperator)
		o.Parameters = params
		if body != nil {
			rb := openapi3.NewRequestBody().WithRequired(true)
			rb.Content = openapi3.Content{"application/json": &openapi3.MediaType{Schema: body, Example: example}}
			o.RequestBody = &openapi3.RequestBodyRef{Value: rb}
		}
		o.Responses = b.responses(ok, compensationErrors)
		b.add(path, method, o)
	}
	str := openapi3.NewStringSchema
	query := func(name, desc string, s *openapi3.Schema) *openapi3.ParameterRef {
		return &openapi3.ParameterRef{Value: openapi3.NewQueryParameter(name).WithDescription(desc).WithSchema(s)}
	}
	listParams := openapi3.Parameters{
		query("status", "Comma-separated statuses: FAILED, PREPARED, SUCCEEDED.", str()),
		query("recoverable", "Comma-separated recoverabilities: RECOVERABLE, UNRECOVERABLE, UNKNOWN.", str()),
		query("context", "The failed function's bounded context.", str()),
		query("processor", "The failed function's processor.", str()),
		query("function", "The failed function's name.", str()),
		query("aggregate", "The aggregate type of the failed event, as name or context.name.", str()),
		query("aggregateId", "The aggregate ID of the failed event.", str()),
		query("eventId", "The failed event's ID.", str()),
		query("needsOperator", "Only executions waiting for an operator.", openapi3.NewBoolSchema()),
		query("errorCode", "The error code of the last failure (e.g. TooManyRequests).", str()),
		query("failedFrom", "Only executions whose last failure is at or after this time (RFC 3339).", openapi3.NewDateTimeSchema()),
		query("failedTo", "Only executions whose last failure is before this time (RFC 3339).", openapi3.NewDateTimeSchema()),
		query("page", "The page, from 1.", openapi3.NewIntegerSchema().WithMin(1).WithDefault(1)),
		query("size", "The page size.", openapi3.NewIntegerSchema().WithMin(1).WithDefault(20)),
	}
	exec := b.params("executionId")
	withOperator := b.params("executionId", HeaderOperator)
	base := "/" + compensationSegment + "/executions"
	op(http.MethodGet, base, "listExecutions", "A page of executions, filtered.", jsonOK("The page.", pageRef, nil), listParams, nil, nil)
	op(http.MethodGet, base+"/{executionId}", "getExecution", "One execution with its history.", jsonOK("The execution.", detailRef, nil), exec, nil, nil)
	op(http.MethodPost, base+"/{executionId}/retry", "retryExecution", "Force a retry now, whatever the retry limit.", jsonOK("The attempt.", attemptRef, nil), withOperator, nil, nil)
	op(http.MethodPut, base+"/{executionId}/retry-spec", "setRetrySpec", "Change the execution's retry spec.", jsonOK("The execution.", detailRef, nil), withOperator, specRef,
		map[string]any{"maxRetries": 5, "minBackoff": "30s", "executionTimeout": "2m"})
	op(http.MethodPut, base+"/{executionId}/recoverable", "setRecoverable", "Mark whether retrying may help.", jsonOK("The execution.", detailRef, nil), withOperator, recRef,
		map[string]any{"recoverable": string(compensation.Unrecoverable)})
	op(http.MethodPut, base+"/{executionId}/function", "setFunction", "Change the function a retry re-delivers to (after a rename).", jsonOK("The execution.", detailRef, nil), withOperator, fnRef,
		map[string]any{"context": "shop", "processor": "fulfilment", "name": "reserve_stock"})
	op(http.MethodGet, "/"+compensationSegment+"/counts", "getCounts", "Executions by status, and those waiting for an operator.", jsonOK("The counts.", countsRef, nil), nil, nil, nil)
}

// looseHistory describes an execution's history (the streams of factum's
// own execution aggregate, whose events the public event schemas leave
// out) as streams of any events.
func (b *docBuilder) looseHistory(detail *openapi3.SchemaRef) {
	if detail == nil || detail.Value == nil || detail.Value.Properties["history"] == nil {
		return
	}
	has := true
	stream := openapi3.NewObjectSchema()
	stream.Description = "One stream of the execution's history, in the EventStream shape: every failure, retry and operator action, with its time and operator (ownerId)."
	stream.AdditionalProperties = openapi3.AdditionalProperties{Has: &has}
	history := openapi3.NewArraySchema().WithItems(stream)
	history.Description = "The execution's own event streams, in version order."
	detail.Value.Properties["history"] = openapi3.NewSchemaRef("", history)
}
