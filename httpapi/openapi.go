package httpapi

import (
	"context"
	"encoding/json"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"unicode"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/aggregate"
	"github.com/factum-go/factum/command"
	"github.com/getkin/kin-openapi/openapi3"
)

// getOpenAPI serves GET /openapi.json.
func (h *Handler) getOpenAPI(w http.ResponseWriter, _ *http.Request) {
	b, err := h.OpenAPI()
	if err != nil {
		writeError(w, err)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(b)
}

// OpenAPI returns the OpenAPI 3.0.3 document of the handler's routes as
// JSON: every route with its parameters, headers, statuses and typed
// bodies, with the schemas of every command, event and state type derived
// from their Go types. It is built once, checked with kin-openapi's
// validator (a document that does not validate is an error, never served),
// and then cached.
func (h *Handler) OpenAPI() ([]byte, error) {
	h.openapiOnce.Do(func() {
		doc := h.OpenAPIDocument()
		if err := doc.Validate(context.Background()); err != nil {
			h.openapiErr = factum.Errorf(factum.CodeInternalServerError, "httpapi: the OpenAPI document does not validate: %w", err)
			return
		}
		h.openapi, h.openapiErr = json.MarshalIndent(doc, "", "  ")
	})
	return h.openapi, h.openapiErr
}

// OpenAPIDocument builds the OpenAPI document of the handler's routes as
// kin-openapi's typed model (a new one on each call).
func (h *Handler) OpenAPIDocument() *openapi3.T {
	b := &docBuilder{h: h, sc: NewSchemas()}
	return b.build()
}

// docBuilder builds one document.
type docBuilder struct {
	h   *Handler
	sc  *Schemas
	doc *openapi3.T

	codeRef, stageRef, recoverRef *openapi3.SchemaRef
	errRef, resultRef, streamRef  *openapi3.SchemaRef
	tags                          []string
}

// routed returns the aggregate types the handler routes, in the
// registry's order: the document describes exactly the routes served.
func (b *docBuilder) routed() []aggregate.Type {
	var out []aggregate.Type
	for _, t := range b.h.rt.Registry().Types() {
		if _, ok := b.h.commands[t.Named()]; ok {
			out = append(out, t)
		}
	}
	return out
}

// segmentOf returns the {aggregate} path segment that names t: its name,
// or context.name when another context uses the name too.
func (h *Handler) segmentOf(t aggregate.Type) string {
	n := t.Named()
	if h.byName[n.Aggregate] == t {
		return n.Aggregate
	}
	return n.String()
}

// stateType returns the state type S of an *aggregate.Definition[S], read
// from its NewState method: aggregate.Type does not expose it, and the
// document is built once, so reflection here costs nothing per request.
func stateType(t aggregate.Type) (reflect.Type, bool) {
	m := reflect.ValueOf(t).MethodByName("NewState")
	if !m.IsValid() || m.Type().NumIn() != 0 || m.Type().NumOut() != 1 {
		return nil, false
	}
	return m.Type().Out(0), true
}

// camel joins words as a lower camel-case identifier: "shop.cart",
// "add_item" -> "shopCartAddItem".
func camel(parts ...string) string {
	var b strings.Builder
	for _, p := range parts {
		for w := range strings.FieldsFuncSeq(p, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }) {
			if b.Len() == 0 {
				b.WriteString(strings.ToLower(w[:1]) + w[1:])
			} else {
				b.WriteString(strings.ToUpper(w[:1]) + w[1:])
			}
		}
	}
	return b.String()
}

func (b *docBuilder) build() *openapi3.T {
	h := b.h
	b.doc = &openapi3.T{
		OpenAPI: "3.0.3",
		Info: &openapi3.Info{
			Title:   h.cfg.Title,
			Version: h.cfg.Version,
			Description: "Commands, state, event streams, request lookup, snapshot queries and compensation of a factum service. " +
				"Every error is a JSON Error body whose status follows its code. Every route also exists under /tenant/{tenant}, " +
				"acting in that tenant. State documents share one shape (AggregateState): the identity nested, times in RFC 3339 with milliseconds.",
			License: &openapi3.License{Name: h.cfg.LicenseName, URL: h.cfg.LicenseURL},
		},
		Paths:      openapi3.NewPaths(),
		Components: &openapi3.Components{},
	}
	for _, u := range h.cfg.Servers {
		b.doc.Servers = append(b.doc.Servers, &openapi3.Server{URL: u})
	}
	if len(b.doc.Servers) == 0 {
		b.doc.Servers = openapi3.Servers{{URL: "/", Description: "The server that serves this document."}}
	}
	b.enums()
	b.components()
	b.problemComponents()
	events := b.eventSchemas()
	b.resultRef = b.sc.Define("CommandResult", reflect.TypeFor[command.Result]())
	b.streamRef = b.sc.Define("EventStream", reflect.TypeFor[factum.EventStream]())
	b.typeDomainEvents(events)
	genericState := b.sc.Define("AggregateState", reflect.TypeFor[AggregateState]())
	b.querySchemas()

	for _, t := range b.routed() {
		b.aggregateRoutes(t, genericState)
	}
	if h.cfg.Compensation != nil {
		b.compensationRoutes()
	}
	if h.cfg.Projections != nil {
		b.projectionDocRoutes(h.cfg.Projections)
	}
	b.principalRoute()
	b.tenantRoutes()
	b.serviceRoutes()

	b.doc.Components.Schemas = b.sc.Defs
	slices.Sort(b.tags)
	for _, tag := range slices.Compact(b.tags) {
		b.doc.Tags = append(b.doc.Tags, &openapi3.Tag{Name: tag, Description: tagDescription(tag)})
	}
	return b.doc
}

func tagDescription(tag string) string {
	switch tag {
	case "service":
		return "Health, readiness and this document."
	case compensationSegment:
		return "Operator routes over failed event-function executions."
	case projectionTag:
		return "Read queries over projections' read models, and their operator routes."
	}
	return "Commands, state, events and snapshots of the aggregate " + tag + "."
}

// eventSchemas defines every event type and returns their names. Events
// without a sourcing function (aggregate.Emits) are in the codec registry
// only: every registered name that is not a command is an event.
func (b *docBuilder) eventSchemas() []string {
	h := b.h
	var names []string
	commands := map[string]bool{}
	for _, t := range b.routed() {
		for _, spec := range t.Commands() {
			commands[spec.Name] = true
		}
		if sourced, ok := t.(interface{ SourcedEvents() []string }); ok {
			names = append(names, sourced.SourcedEvents()...)
		}
	}
	// Commands and events of factum's own (internal) aggregates are not
	// part of the public API.
	hidden := h.internalNames()
	for _, t := range h.rt.Registry().Types() {
		for _, spec := range t.Commands() {
			commands[spec.Name] = true
		}
	}
	for _, name := range h.codec.Names() {
		if !commands[name] && !hidden[name] {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	names = slices.Compact(names)
	var out []string
	for _, name := range names {
		if typ, ok := h.codec.TypeOf(name); ok {
			b.sc.Define(name, typ)
			out = append(out, name)
		}
	}
	return out
}

// typeDomainEvents makes an event's name an enum of the event names and
// its body one of the event schemas.
func (b *docBuilder) typeDomainEvents(events []string) {
	def, ok := b.sc.Defs["factum.DomainEvent"]
	if !ok || len(events) == 0 {
		return
	}
	names := make([]any, len(events))
	body := &openapi3.Schema{Description: "The event's body: the schema named by the event's name."}
	for i, e := range events {
		names[i] = e
		body.AnyOf = append(body.AnyOf, b.sc.ref(e))
	}
	name := openapi3.NewStringSchema().WithEnum(names...)
	name.Description = "The event's name: the name of its body's schema."
	def.Value.Properties["name"] = openapi3.NewSchemaRef("", name)
	def.Value.Properties["body"] = openapi3.NewSchemaRef("", body)
}

// stateDocument defines the state document of t: AggregateState, described
// once, with t's typed state (allOf), which generated clients merge into
// one type.
func (b *docBuilder) stateDocument(t aggregate.Type, generic *openapi3.SchemaRef) *openapi3.SchemaRef {
	st, ok := stateType(t)
	if !ok {
		return generic
	}
	tag := t.Named().String()
	stateRef := b.sc.Define(tag+".state", st)
	typed := openapi3.NewObjectSchema()
	typed.Properties = openapi3.Schemas{"state": stateRef}
	typed.Required = []string{"state"}
	doc := &openapi3.Schema{
		AllOf:       openapi3.SchemaRefs{generic, openapi3.NewSchemaRef("", typed)},
		Description: "The state document (AggregateState) of " + tag + ", with its typed state.",
	}
	return b.sc.Add(tag+".AggregateState", doc)
}

// add adds an operation on the path and method, tagged.
func (b *docBuilder) add(path, method string, op *openapi3.Operation) {
	b.doc.AddOperation(path, method, op)
	b.tags = append(b.tags, op.Tags...)
}

// commandResponses is the answer of a command route: the result as JSON,
// or, with Accept: text/event-stream, one event per stage reached.
func (b *docBuilder) commandResponses() *openapi3.Responses {
	// The Server-Sent Events form is described, not listed as a second
	// media type: generated clients would otherwise type every answer as
	// "a result or a string", and none of them reads event streams.
	ok := openapi3.NewResponse().WithDescription("The result at the awaited stage. A request with Accept: text/event-stream gets " +
		"Server-Sent Events instead: one per stage reached, named by the stage, with a CommandResult as data (see x-factum-event-stream). " +
		"An answer replayed for an Idempotency-Key whose body was too large to keep is its status with the problem document " +
		problemBodyNotStored + " and Idempotent-Body-Omitted: true.")
	ok.Content = openapi3.Content{
		"application/json": &openapi3.MediaType{Schema: b.resultRef, Example: exampleResult(factum.StageProcessed)},
	}
	ok.Extensions = map[string]any{"x-factum-event-stream": map[string]any{
		"contentType": "text/event-stream", "event": "the stage reached", "data": SchemaRefPrefix + "CommandResult",
	}}
	ok.Headers = openapi3.Headers{}
	for _, name := range []string{HeaderCommandID, HeaderRequestID, HeaderAggregateID, HeaderAggregateVersion, HeaderServerTiming, headerIdempotentReplayed} {
		ok.Headers[name] = &openapi3.HeaderRef{Ref: "#/components/headers/" + name, Value: b.doc.Components.Headers[name].Value}
	}
	return b.withCommandRefusals(b.responses(ok, commandErrors))
}

// commandParams are the parameters of every command route.
func (b *docBuilder) commandParams(withID bool) openapi3.Parameters {
	var ps openapi3.Parameters
	if withID {
		ps = append(ps, b.param("id"))
	}
	return append(ps, b.params(HeaderRequestID, HeaderAggregateVersion, HeaderWaitStage, HeaderWaitContext,
		HeaderWaitProcessor, HeaderWaitFunction, HeaderWaitTimeout, headerIdempotencyKey)...)
}

func (b *docBuilder) aggregateRoutes(t aggregate.Type, genericState *openapi3.SchemaRef) {
	h := b.h
	seg := "/" + h.segmentOf(t)
	tag := t.Named().String()
	prefix := h.segmentOf(t)
	stateDoc := b.stateDocument(t, genericState)
	newOp := func(id, summary, role string) *openapi3.Operation {
		op := openapi3.NewOperation()
		op.Tags = []string{tag}
		op.OperationID = camel(prefix, id)
		op.Summary = summary
		secure(op, role)
		return op
	}
	for _, spec := range t.Commands() {
		if _, routed := h.commands[t.Named()][spec.Name]; !routed {
			continue
		}
		body := b.sc.Define(spec.Name, spec.Type)
		rb := openapi3.NewRequestBody().WithDescription("The command body (an empty body is {}). Fields the command does not have are refused unless the aggregate allows them.")
		rb.Content = openapi3.NewContentWithJSONSchemaRef(body)
		mk := func(id string, withID bool) *openapi3.Operation {
			op := newOp(id, "Send "+spec.Name+" and wait for a stage.", roleSend)
			op.RequestBody = &openapi3.RequestBodyRef{Value: rb}
			op.Parameters = b.commandParams(withID)
			op.Responses = b.commandResponses()
			return op
		}
		b.add(seg+"/{id}/"+spec.Name, http.MethodPost, mk(spec.Name, true))
		if spec.Create {
			op := mk(spec.Name+"_new", false)
			op.Description = "Creates an aggregate whose ID is derived from the request ID, so a retry finds the first attempt."
			b.add(seg+"/"+spec.Name, http.MethodPost, op)
		}
	}
	for _, c := range []struct{ method, path, id, summary string }{
		{http.MethodDelete, seg + "/{id}", "delete", "Delete the aggregate (the delete_aggregate command)."},
		{http.MethodPut, seg + "/{id}/recover", "recover", "Recover a deleted aggregate (the recover_aggregate command)."},
	} {
		op := newOp(c.id, c.summary, roleSend)
		op.Parameters = b.commandParams(true)
		op.Responses = b.commandResponses()
		b.add(c.path, c.method, op)
	}

	read := func(path, id, summary string, ok *openapi3.Response, ps ...string) {
		op := newOp(id, summary, roleRead)
		op.Parameters = b.params(ps...)
		op.Responses = b.responses(ok, readErrors)
		b.add(path, http.MethodGet, op)
	}
	stateOK := jsonOK("The state document.", stateDoc, nil)
	read(seg+"/{id}/state", "getState", "The current state.", stateOK, "id")
	read(seg+"/{id}/state/{version}", "getStateAtVersion", "The state at a version.", stateOK, "id", "version")
	read(seg+"/{id}/state/time/{time}", "getStateAtTime", "The state after every stream created at or before a time.", stateOK, "id", "time")
	streams := openapi3.NewArraySchema()
	streams.Items = b.streamRef
	read(seg+"/{id}/event/{from}/{to}", "listEvents", "The event streams with from <= version <= to (at most "+
		itoa(h.cfg.MaxEventRange)+" versions).", jsonOK("The streams, in version order.", openapi3.NewSchemaRef("", streams), nil), "id", "from", "to")
	read(seg+"/{id}/request/{requestId}", "lookupRequest", "Was the request appended, and as what?",
		jsonOK("The PROCESSED result of the request's stream.", b.resultRef, exampleResult(factum.StageProcessed)), "id", "requestId")

	if h.cfg.SnapshotStore == nil {
		return
	}
	read(seg+"/{id}/snapshot", "getSnapshot", "The latest saved snapshot.", jsonOK("The snapshot's state document.", stateDoc, nil), "id")
	regen := newOp("regenerateSnapshot", "Regenerate the snapshot from the whole history and save it.", roleOperator)
	regen.Parameters = b.params("id")
	regen.Responses = b.responses(jsonOK("The stored snapshot's state document.", stateDoc, nil), readErrors)
	b.add(seg+"/{id}/snapshot", http.MethodPut, regen)
	if h.queries[t.Named()] != nil {
		b.queryRoutes(t, seg, newOp, stateDoc)
	}
}

func itoa(n int) string {
	b, _ := json.Marshal(n)
	return string(b)
}

// tenantRoutes repeats every aggregate and compensation route under
// /tenant/{tenant}.
func (b *docBuilder) tenantRoutes() {
	paths := b.doc.Paths.Map()
	keys := make([]string, 0, len(paths))
	for p := range paths {
		keys = append(keys, p)
	}
	slices.Sort(keys)
	for _, p := range keys {
		item := paths[p]
		scoped := &openapi3.PathItem{}
		for method, op := range item.Operations() {
			o := *op
			o.OperationID = camel("tenant", op.OperationID)
			o.Parameters = append(openapi3.Parameters{b.param("tenant")}, op.Parameters...)
			scoped.SetOperation(method, &o)
		}
		b.doc.Paths.Set("/"+tenantSegment+"/{tenant}"+p, scoped)
	}
}

// serviceRoutes adds the open routes: health, readiness, this document.
func (b *docBuilder) serviceRoutes() {
	status := openapi3.NewObjectSchema().WithProperty("status", openapi3.NewStringSchema()).WithRequired([]string{"status"})
	open := func(path, id, summary string, ok *openapi3.Response, statuses ...int) {
		op := openapi3.NewOperation()
		op.OperationID, op.Summary, op.Tags = id, summary, []string{"service"}
		op.Security = openapi3.NewSecurityRequirements()
		op.Responses = b.responses(ok, statuses)
		b.add(path, http.MethodGet, op)
	}
	open("/healthz", "healthz", "The process answers.", jsonOK("Alive.", openapi3.NewSchemaRef("", status), map[string]any{"status": "ok"}), 429, 500)
	open("/readyz", "readyz", "The service accepts work.", jsonOK("Ready.", openapi3.NewSchemaRef("", status), map[string]any{"status": "ready"}), 429, 500, 503)
	open("/openapi.json", "getOpenApi", "This document.", jsonOK("The OpenAPI document.", openapi3.NewSchemaRef("", openapi3.NewObjectSchema()), nil), 429, 500)
}
