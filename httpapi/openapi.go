package httpapi

import (
	"encoding/json"
	"maps"
	"net/http"
	"reflect"
	"slices"
	"strings"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/aggregate"
	"github.com/factum-go/factum/command"
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

// OpenAPI returns the OpenAPI 3.1 document of the handler's routes, with
// JSON Schemas of every command, event and state type derived from their Go
// types. It is built once and then cached.
func (h *Handler) OpenAPI() ([]byte, error) {
	h.openapiOnce.Do(func() {
		h.openapi, h.openapiErr = h.withSecurity(json.MarshalIndent(h.buildOpenAPI(), "", "  "))
	})
	return h.openapi, h.openapiErr
}

const refPrefix = "#/components/schemas/"

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

func (h *Handler) buildOpenAPI() Schema {
	sc := NewSchemas(refPrefix)
	errRef := sc.Define("Error", reflect.TypeFor[ErrorBody]())
	resultRef := sc.Define("CommandResult", reflect.TypeFor[command.Result]())
	streamRef := sc.Define("EventStream", reflect.TypeFor[factum.EventStream]())
	envelopeRef := sc.Define("StoredState", reflect.TypeFor[aggregate.StoredState]())

	params := Schema{
		"id":        Schema{"name": "id", "in": "path", "required": true, "schema": Schema{"type": "string", "maxLength": factum.MaxIDLen}, "description": "The aggregate ID."},
		"version":   Schema{"name": "version", "in": "path", "required": true, "schema": Schema{"type": "integer", "minimum": 1}},
		"time":      Schema{"name": "time", "in": "path", "required": true, "schema": Schema{"type": "string"}, "description": "RFC 3339 or Unix milliseconds."},
		"from":      Schema{"name": "from", "in": "path", "required": true, "schema": Schema{"type": "integer", "minimum": 1}},
		"to":        Schema{"name": "to", "in": "path", "required": true, "schema": Schema{"type": "integer", "minimum": 1}},
		"requestId": Schema{"name": "requestId", "in": "path", "required": true, "schema": Schema{"type": "string", "maxLength": factum.MaxIDLen}},
		"tenant":    Schema{"name": "tenant", "in": "path", "required": true, "schema": Schema{"type": "string", "maxLength": factum.MaxTenantLen}},
	}
	headers := []struct{ name, desc string }{
		{HeaderRequestID, "The business intent; a retry reuses it and gets the first attempt's outcome. Default: the command ID."},
		{HeaderAggregateVersion, "The version the aggregate must be at; a mismatch is 409 CommandExpectVersionConflict."},
		{HeaderWaitStage, "SENT, PROCESSED (default), SNAPSHOT, PROJECTED, EVENT_HANDLED or SAGA_HANDLED."},
		{HeaderWaitContext, "Restricts a branch-stage wait to functions of this bounded context."},
		{HeaderWaitProcessor, "Restricts a branch-stage wait to functions of this processor."},
		{HeaderWaitFunction, "Restricts a branch-stage wait to functions of this name."},
		{HeaderWaitTimeout, "Wait timeout: milliseconds or a duration such as 5s, at most " + h.cfg.MaxWaitTimeout.String() + "."},
	}
	var headerRefs []any
	for _, hd := range headers {
		params[hd.name] = Schema{"name": hd.name, "in": "header", "schema": Schema{"type": "string"}, "description": hd.desc}
		headerRefs = append(headerRefs, Schema{"$ref": "#/components/parameters/" + hd.name})
	}
	pref := func(names ...string) []any {
		out := make([]any, 0, len(names))
		for _, n := range names {
			out = append(out, Schema{"$ref": "#/components/parameters/" + n})
		}
		return out
	}
	jsonContent := func(s Schema) Schema { return Schema{"application/json": Schema{"schema": s}} }
	errResp := Schema{"description": "An error; the status follows the code.", "content": jsonContent(errRef)}
	ok := func(desc string, s Schema) Schema {
		return Schema{"200": Schema{"description": desc, "content": jsonContent(s)}, "default": errResp}
	}
	commandOK := Schema{
		"200": Schema{"description": "The result at the awaited stage.", "content": Schema{
			"application/json":  Schema{"schema": resultRef},
			"text/event-stream": Schema{"schema": Schema{"type": "string"}, "description": "With Accept: text/event-stream: one event per stage reached, named by the stage, with a CommandResult as data."},
		}},
		"default": errResp,
	}

	paths := map[string]Schema{}
	add := func(path, method string, op Schema) {
		if paths[path] == nil {
			paths[path] = Schema{}
		}
		paths[path][method] = op
	}
	var eventNames []string
	commandNames := map[string]bool{}
	for _, t := range h.types {
		seg := "/" + h.segmentOf(t)
		tag := t.Named().String()
		envelope := envelopeRef
		if st, ok := stateType(t); ok {
			stateRef := sc.Define(tag+".state", st)
			envelope = Schema{"allOf": []any{envelopeRef, Schema{"properties": Schema{"state": stateRef}}}}
		}
		for _, spec := range t.Commands() {
			commandNames[spec.Name] = true
			if spec.Internal {
				continue
			}
			body := sc.Define(spec.Name, spec.Type)
			op := Schema{
				"tags": []any{tag}, "operationId": tag + "." + spec.Name,
				"summary":     spec.Name,
				"requestBody": Schema{"required": false, "content": jsonContent(body)},
				"responses":   commandOK,
			}
			withID := cloneSchema(op)
			withID["parameters"] = append(pref("id"), headerRefs...)
			add(seg+"/{id}/"+spec.Name, "post", withID)
			if spec.Create {
				noID := cloneSchema(op)
				noID["operationId"] = tag + "." + spec.Name + ".new"
				noID["description"] = "Creates an aggregate whose ID is derived from the request ID, so a retry finds the first attempt."
				noID["parameters"] = headerRefs
				add(seg+"/"+spec.Name, "post", noID)
			}
		}
		if sourced, ok := t.(interface{ SourcedEvents() []string }); ok {
			eventNames = append(eventNames, sourced.SourcedEvents()...)
		}
		get := func(id, summary string, resp Schema, ps ...string) Schema {
			return Schema{"tags": []any{tag}, "operationId": tag + "." + id, "summary": summary, "parameters": pref(ps...), "responses": resp}
		}
		add(seg+"/{id}/state", "get", get("state", "The current state.", ok("The state.", envelope), "id"))
		add(seg+"/{id}/state/{version}", "get", get("stateAtVersion", "The state at a version.", ok("The state.", envelope), "id", "version"))
		add(seg+"/{id}/state/time/{time}", "get", get("stateAtTime", "The state after every stream created at or before a time.", ok("The state.", envelope), "id", "time"))
		add(seg+"/{id}/event/{from}/{to}", "get", get("events", "The event streams with from <= version <= to.", ok("The streams.", Schema{"type": "array", "items": streamRef}), "id", "from", "to"))
		add(seg+"/{id}/request/{requestId}", "get", get("lookup", "Was the request appended, and as what?", ok("The PROCESSED result of the request's stream.", resultRef), "id", "requestId"))
		del := get("delete", "Deletes the aggregate (the delete_aggregate command).", commandOK)
		del["parameters"] = append(pref("id"), headerRefs...)
		add(seg+"/{id}", "delete", del)
		rec := get("recover", "Recovers a deleted aggregate (the recover_aggregate command).", commandOK)
		rec["parameters"] = append(pref("id"), headerRefs...)
		add(seg+"/{id}/recover", "put", rec)
		if h.cfg.SnapshotStore != nil {
			add(seg+"/{id}/snapshot", "get", get("snapshot", "The latest saved snapshot.", ok("The snapshot.", Schema{"type": "object"}), "id"))
		}
		if h.queries[t.Named()] != nil {
			for _, kind := range []string{"single", "list", "paged", "count"} {
				for _, suffix := range []string{"", "/state"} {
					if kind == "count" && suffix != "" {
						continue
					}
					q := get("snapshot."+kind+strings.ReplaceAll(suffix, "/", "."), "Snapshot query: "+kind+suffix+
						". The body is the JSON form of package query (a condition for count, a paged query for paged).", ok("The result.", Schema{}))
					q["requestBody"] = Schema{"required": true, "content": jsonContent(Schema{"type": "object"})}
					add(seg+"/snapshot/"+kind+suffix, "post", q)
				}
			}
		}
	}
	// Events without a sourcing function (aggregate.Emits) are in the codec
	// registry only: every registered name that is not a command is an
	// event.
	hidden := h.internalNames()
	for _, name := range h.codec.Names() {
		if !commandNames[name] && !hidden[name] {
			eventNames = append(eventNames, name)
		}
	}
	slices.Sort(eventNames)
	eventNames = slices.Compact(eventNames)
	var eventRefs []any
	for _, name := range eventNames {
		if typ, ok := h.codec.TypeOf(name); ok {
			eventRefs = append(eventRefs, sc.Define(name, typ))
		}
	}

	// Every route also exists under /tenant/{tenant}.
	for _, p := range slices.Sorted(maps.Keys(paths)) {
		item := Schema{}
		for method, op := range paths[p] {
			o := cloneSchema(op.(Schema))
			o["operationId"] = "tenant." + o["operationId"].(string)
			ps, _ := o["parameters"].([]any)
			o["parameters"] = append(pref("tenant"), ps...)
			item[method] = o
		}
		paths["/"+tenantSegment+"/{tenant}"+p] = item
	}
	plain := func(id, summary string) Schema {
		return Schema{"get": Schema{"operationId": id, "summary": summary, "responses": Schema{"200": Schema{"description": "OK"}, "503": Schema{"description": "Not ready.", "content": jsonContent(errRef)}}}}
	}
	paths["/healthz"] = plain("healthz", "The process answers.")
	paths["/readyz"] = plain("readyz", "The service accepts work.")
	paths["/openapi.json"] = plain("openapi", "This document.")

	return Schema{
		"openapi": "3.1.0",
		"info": Schema{
			"title":   h.cfg.Title,
			"version": h.cfg.Version,
			"description": "Commands, state, event streams and request lookup of a factum service. " +
				"Errors are JSON bodies whose status follows their code. Event bodies are one of the event schemas, " +
				"named by the event's name: " + strings.Join(eventNames, ", ") + ".",
		},
		"jsonSchemaDialect": "https://json-schema.org/draft/2020-12/schema",
		"paths":             paths,
		"components": Schema{
			"schemas":    sc.Defs,
			"parameters": params,
		},
		"x-factum-events": eventRefs,
	}
}

// cloneSchema copies the top level of s, so one operation can be varied
// without changing another that shares its nested values.
func cloneSchema(s Schema) Schema { return maps.Clone(s) }
