package httpapi_test

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/idempotency"
	"github.com/getkin/kin-openapi/openapi3"
)

// loadOpenAPI fetches /openapi.json as a client does and loads it with
// kin-openapi's loader, which resolves every $ref.
func loadOpenAPI(t *testing.T, f *fixture) *openapi3.T {
	t.Helper()
	r := f.do(t, "GET", "/openapi.json", "")
	wantOK(t, r)
	doc, err := openapi3.NewLoader().LoadFromData(r.body)
	if err != nil {
		t.Fatalf("the served document does not load: %v", err)
	}
	return doc
}

// TestOpenAPIValidates: the served document passes kin-openapi's
// validator, examples included.
func TestOpenAPIValidates(t *testing.T) {
	for name, f := range map[string]*fixture{
		"snapshots":    snapshotFixture(t),
		"compensation": compensationFixture(t, new(atomic.Bool)),
		"bare":         newFixture(t, nil),
	} {
		t.Run(name, func(t *testing.T) {
			doc := loadOpenAPI(t, f)
			if err := doc.Validate(context.Background(), openapi3.EnableExamplesValidation()); err != nil {
				t.Fatalf("invalid document: %v", err)
			}
			if doc.OpenAPI != "3.0.3" || doc.Info.License == nil || doc.Info.License.Name == "" || len(doc.Servers) == 0 {
				t.Fatalf("openapi %q, license %+v, servers %v", doc.OpenAPI, doc.Info.License, doc.Servers)
			}
		})
	}
}

func TestOpenAPIRoutes(t *testing.T) {
	doc := loadOpenAPI(t, compensationFixture(t, new(atomic.Bool)))
	for _, p := range []struct{ path, method string }{
		{"/cart/{id}/add_item", "POST"},
		{"/cart/{id}/remove_item", "POST"},
		{"/cart/{id}/delete_aggregate", "POST"},
		{"/cart/{id}/state", "GET"},
		{"/cart/{id}/state/{version}", "GET"},
		{"/cart/{id}/state/time/{time}", "GET"},
		{"/cart/{id}/event/{from}/{to}", "GET"},
		{"/cart/{id}/request/{requestId}", "GET"},
		{"/cart/{id}", "DELETE"},
		{"/cart/{id}/recover", "PUT"},
		{"/cart/{id}/snapshot", "GET"},
		{"/cart/{id}/snapshot", "PUT"},
		{"/cart/snapshot/single", "POST"},
		{"/cart/snapshot/single/state", "POST"},
		{"/cart/snapshot/list", "POST"},
		{"/cart/snapshot/list/state", "POST"},
		{"/cart/snapshot/paged", "POST"},
		{"/cart/snapshot/paged/state", "POST"},
		{"/cart/snapshot/count", "POST"},
		{"/compensation/executions", "GET"},
		{"/compensation/executions/{executionId}", "GET"},
		{"/compensation/executions/{executionId}/retry", "POST"},
		{"/compensation/executions/{executionId}/retry-spec", "PUT"},
		{"/compensation/executions/{executionId}/recoverable", "PUT"},
		{"/compensation/executions/{executionId}/function", "PUT"},
		{"/compensation/counts", "GET"},
		{"/tenant/{tenant}/cart/{id}/add_item", "POST"},
		{"/tenant/{tenant}/cart/snapshot/count", "POST"},
		{"/tenant/{tenant}/compensation/counts", "GET"},
		{"/healthz", "GET"},
		{"/readyz", "GET"},
		{"/openapi.json", "GET"},
	} {
		item := doc.Paths.Find(p.path)
		if item == nil || item.GetOperation(p.method) == nil {
			t.Errorf("no %s %s", p.method, p.path)
		}
	}

	ident := regexp.MustCompile(`^[a-z][A-Za-z0-9]*$`)
	seen := map[string]string{}
	for path, item := range doc.Paths.Map() {
		for method, op := range item.Operations() {
			where := method + " " + path
			if !ident.MatchString(op.OperationID) {
				t.Errorf("%s: operationId %q is not a method name", where, op.OperationID)
			}
			if prev, dup := seen[op.OperationID]; dup {
				t.Errorf("operationId %q on %s and %s", op.OperationID, prev, where)
			}
			seen[op.OperationID] = where
			open := path == "/healthz" || path == "/readyz" || path == "/openapi.json"
			if open != (op.Security != nil && len(*op.Security) == 0) {
				t.Errorf("%s: security %v (open routes take none, the others a credential)", where, op.Security)
			}
			if !open && op.Extensions["x-factum-role"] == nil {
				t.Errorf("%s: no role", where)
			}
			for status, resp := range op.Responses.Map() {
				if status == "200" {
					continue
				}
				// An error is the Error body, or the Idempotency-Key
				// middleware's problem document (422 only that).
				mt, pt := resp.Value.Content.Get("application/json"), resp.Value.Content.Get("application/problem+json")
				if (mt == nil && status != "422") || (mt != nil && (mt.Schema == nil || mt.Schema.Ref != "#/components/schemas/Error")) ||
					(pt != nil && (pt.Schema == nil || pt.Schema.Ref != "#/components/schemas/Problem")) {
					t.Errorf("%s %s: error answer without the Error body or with another body", where, status)
				}
			}
			if !open && op.Responses.Status(400) == nil {
				t.Errorf("%s: no 400", where)
			}
		}
	}
	if op := doc.Paths.Find("/cart/{id}/add_item").Post; op.Responses.Status(409) == nil || op.Responses.Status(200).Value.Headers[("Command-Aggregate-Version")] == nil {
		t.Errorf("add_item lacks its 409 or its response headers")
	}
	commandRefusals(t, doc)
}

// commandRefusals checks the refusals of the command routes: the
// Idempotency-Key middleware's problem documents (400, 409, 413, 422, 500,
// 503) beside the Error body, and Retry-After on 409 (in progress) and
// 503 (always: a clustered service that cannot reach NATS or a
// partition's owner, or an unreachable key store).
func commandRefusals(t *testing.T, doc *openapi3.T) {
	t.Helper()
	for _, op := range []*openapi3.Operation{
		doc.Paths.Find("/cart/{id}/add_item").Post, doc.Paths.Find("/tenant/{tenant}/cart/{id}").Delete, doc.Paths.Find("/cart/{id}/recover").Put,
	} {
		for _, tc := range []struct {
			status           int
			errorBody        bool
			retryAfter, must bool
		}{
			{400, true, false, false}, {409, true, true, false}, {413, true, false, false},
			{422, false, false, false}, {500, true, false, false}, {503, true, true, true},
		} {
			where := fmt.Sprintf("%s %d", op.OperationID, tc.status)
			r := op.Responses.Status(tc.status)
			if r == nil || r.Value == nil {
				t.Errorf("%s: not documented", where)
				continue
			}
			if pt := r.Value.Content.Get("application/problem+json"); pt == nil || pt.Schema.Ref != "#/components/schemas/Problem" || len(pt.Examples) == 0 {
				t.Errorf("%s: no problem document", where)
			}
			if got := r.Value.Content.Get("application/json") != nil; got != tc.errorBody {
				t.Errorf("%s: Error body %v, want %v", where, got, tc.errorBody)
			}
			h := r.Value.Headers["Retry-After"]
			if (h != nil) != tc.retryAfter || (h != nil && h.Value.Required != tc.must) {
				t.Errorf("%s: Retry-After %+v, want documented %v, required %v", where, h, tc.retryAfter, tc.must)
			}
		}
	}
	// Every problem type the middleware answers a refusal with is an
	// example of its status; a replayed answer whose body was not kept is
	// described on 200.
	var types []string
	for _, r := range doc.Paths.Find("/cart/{id}/add_item").Post.Responses.Map() {
		if pt := r.Value.Content.Get("application/problem+json"); pt != nil {
			for _, ex := range pt.Examples {
				types = append(types, ex.Value.Value.(map[string]any)["type"].(string))
			}
		}
	}
	slices.Sort(types)
	want := []string{idempotency.ProblemKeyMissing, idempotency.ProblemKeyInvalid, idempotency.ProblemKeyReused, idempotency.ProblemInProgress,
		idempotency.ProblemFailed, idempotency.ProblemBodyTooLarge, idempotency.ProblemBadRequest, idempotency.ProblemUnavailable,
		idempotency.ProblemStoredResponse}
	slices.Sort(want)
	if !slices.Equal(types, want) {
		t.Errorf("problem examples %v, want %v", types, want)
	}
	if d := doc.Paths.Find("/cart/{id}/add_item").Post.Responses.Status(200).Value.Description; !strings.Contains(*d, idempotency.ProblemBodyNotStored) {
		t.Errorf("200 does not name %s: %s", idempotency.ProblemBodyNotStored, *d)
	}
	p := doc.Components.Schemas["Problem"]
	if p == nil || !slices.Equal(p.Value.Required, []string{"type", "title", "status"}) {
		t.Errorf("Problem schema %+v", p)
	}
}

func TestOpenAPISchemas(t *testing.T) {
	doc := loadOpenAPI(t, snapshotFixture(t))
	schema := func(name string) *openapi3.Schema {
		t.Helper()
		s := doc.Components.Schemas[name]
		if s == nil || s.Value == nil {
			t.Fatalf("no schema %s", name)
		}
		return s.Value
	}
	enum := func(s *openapi3.Schema) []string {
		var out []string
		for _, v := range s.Enum {
			out = append(out, v.(string))
		}
		return out
	}
	if codes := enum(schema("factum.Code")); len(codes) != len(factum.Codes) || !slices.Contains(codes, "CommandExpectVersionConflict") {
		t.Errorf("code enum %v", codes)
	}
	if stages := enum(schema("factum.CommandStage")); !slices.Equal(stages, []string{"SENT", "PROCESSED", "SNAPSHOT", "PROJECTED", "EVENT_HANDLED", "SAGA_HANDLED"}) {
		t.Errorf("stage enum %v", stages)
	}
	if ref := schema("Error").Properties["code"].Ref; ref != "#/components/schemas/factum.Code" {
		t.Errorf("Error.code is %q, want the code enum", ref)
	}
	if ref := schema("CommandResult").Properties["stage"].Ref; ref != "#/components/schemas/factum.CommandStage" {
		t.Errorf("CommandResult.stage is %q", ref)
	}
	if qty := schema("add_item").Properties["qty"].Value; !qty.Type.Is("integer") {
		t.Errorf("add_item.qty %v, want integer", qty.Type)
	}
	if items := schema("shop.cart.state").Properties["items"].Value; items.AdditionalProperties.Schema == nil || !items.AdditionalProperties.Schema.Value.Type.Is("integer") {
		t.Errorf("state items %+v, want a map of integers", items)
	}
	// The condition tree refers to itself.
	cond := schema("query.Condition")
	if children := cond.Properties["children"].Value; children.Items == nil || children.Items.Ref != "#/components/schemas/query.Condition" {
		t.Errorf("condition children %+v, want a list of conditions", children)
	}
	if op := cond.Properties["operator"].Ref; op != "#/components/schemas/query.Operator" || len(schema("query.Operator").Enum) < 20 {
		t.Errorf("condition operator %q", op)
	}
	if v := cond.Properties["value"].Value; len(v.AnyOf) == 0 {
		t.Errorf("condition value untyped")
	}
	// Event bodies are one of the event schemas.
	body := schema("factum.DomainEvent").Properties["body"].Value
	var refs []string
	for _, r := range body.AnyOf {
		refs = append(refs, r.Ref)
	}
	if !slices.Contains(refs, "#/components/schemas/item_added") || !slices.Contains(refs, "#/components/schemas/aggregate_deleted") {
		t.Errorf("event body %v", refs)
	}
	// One state document, typed per aggregate.
	st := schema("shop.cart.AggregateState")
	if len(st.AllOf) != 2 || st.AllOf[0].Ref != "#/components/schemas/AggregateState" ||
		st.AllOf[1].Value.Properties["state"].Ref != "#/components/schemas/shop.cart.state" {
		t.Errorf("cart state document %+v, want AggregateState with the typed state", st)
	}
	if schema("AggregateState").Properties["aggregateId"].Ref != "#/components/schemas/factum.AggregateID" {
		t.Errorf("AggregateState's identity is not the nested identity")
	}
	for _, path := range []string{"/cart/{id}/state", "/cart/{id}/snapshot"} {
		if ref := doc.Paths.Find(path).Get.Responses.Status(200).Value.Content.Get("application/json").Schema.Ref; ref != "#/components/schemas/shop.cart.AggregateState" {
			t.Errorf("%s answers %q", path, ref)
		}
	}
	if p := doc.Components.Parameters["Command-Aggregate-Version"].Value; !p.Schema.Value.Type.Is("integer") {
		t.Errorf("version header %v", p.Schema.Value.Type)
	}
	if doc.Components.SecuritySchemes["apiKey"] == nil || doc.Components.SecuritySchemes["bearerJwt"] == nil {
		t.Errorf("security schemes %v", doc.Components.SecuritySchemes)
	}
}
