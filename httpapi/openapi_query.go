package httpapi

import (
	"net/http"
	"reflect"

	"github.com/factum-go/factum/aggregate"
	"github.com/factum-go/factum/query"
	"github.com/getkin/kin-openapi/openapi3"
)

// querySchemas defines the bodies of the snapshot queries: the condition
// tree is recursive (children are conditions), and a condition's value is
// a scalar or a list of scalars.
func (b *docBuilder) querySchemas() {
	b.sc.Define("query.Query", reflect.TypeFor[query.Query]())
	b.sc.Define("query.PagedQuery", reflect.TypeFor[query.PagedQuery]())
	cond := b.sc.Defs["query.Condition"].Value
	scalar := func() openapi3.SchemaRefs {
		return openapi3.SchemaRefs{
			openapi3.NewSchemaRef("", openapi3.NewStringSchema()),
			openapi3.NewSchemaRef("", openapi3.NewFloat64Schema().WithFormat("double")),
			openapi3.NewSchemaRef("", openapi3.NewBoolSchema()),
		}
	}
	list := openapi3.NewArraySchema()
	list.Items = openapi3.NewSchemaRef("", &openapi3.Schema{AnyOf: scalar()})
	value := &openapi3.Schema{
		AnyOf:       append(scalar(), openapi3.NewSchemaRef("", list)),
		Description: "The operand (absent for operators without one): a string, number or boolean, or a list of those (IN, BETWEEN, AGGREGATE_IDS, …); times are epoch milliseconds.",
	}
	cond.Properties["value"] = openapi3.NewSchemaRef("", value)
	cond.Description = "A condition over snapshot documents: a field, an operator and its operand; AND, OR, NOR and ELEM_MATCH take children."
	cond.Example = map[string]any{"operator": "AND", "children": []any{
		map[string]any{"field": "state.items.sku-1", "operator": "GTE", "value": 1},
		map[string]any{"operator": "AGGREGATE_IDS", "value": []any{"cart-1", "cart-2"}},
	}}
}

type opMaker func(id, summary, role string) *openapi3.Operation

// queryRoutes adds POST /{aggregate}/snapshot/{single|list|paged|count}
// [/state].
func (b *docBuilder) queryRoutes(t aggregate.Type, seg string, newOp opMaker, stateDoc *openapi3.SchemaRef) {
	stateOnly := openapi3.NewSchemaRef("", &openapi3.Schema{Description: "The aggregate's state."})
	if st, ok := stateType(t); ok {
		stateOnly = b.sc.Define(t.Named().String()+".state", st)
	}
	array := func(items *openapi3.SchemaRef) *openapi3.SchemaRef {
		a := openapi3.NewArraySchema()
		a.Items = items
		return openapi3.NewSchemaRef("", a)
	}
	page := func(items *openapi3.SchemaRef) *openapi3.SchemaRef {
		return openapi3.NewSchemaRef("", openapi3.NewObjectSchema().
			WithProperty("total", openapi3.NewInt64Schema().WithMin(0)).
			WithPropertyRef("list", array(items)).
			WithRequired([]string{"total", "list"}))
	}
	queryBody := b.sc.ref("query.Query")
	pagedBody := b.sc.ref("query.PagedQuery")
	condBody := b.sc.ref("query.Condition")
	exQuery := map[string]any{"condition": map[string]any{"operator": "AGGREGATE_IDS", "value": []any{"cart-1"}}, "limit": 10}
	exPaged := map[string]any{"condition": map[string]any{"operator": "ALL"}, "pagination": map[string]any{"index": 1, "size": 10}}
	for _, q := range []struct {
		path, id, summary string
		body              *openapi3.SchemaRef
		example           any
		result            *openapi3.SchemaRef
	}{
		{"single", "querySingle", "The first snapshot matching the query.", queryBody, exQuery, stateDoc},
		{"single/state", "querySingleState", "The state of the first snapshot matching the query.", queryBody, exQuery, stateOnly},
		{"list", "queryList", "The snapshots matching the query.", queryBody, exQuery, array(stateDoc)},
		{"list/state", "queryListState", "The states of the snapshots matching the query.", queryBody, exQuery, array(stateOnly)},
		{"paged", "queryPaged", "One page of the snapshots matching the query, and their total.", pagedBody, exPaged, page(stateDoc)},
		{"paged/state", "queryPagedState", "One page of the states matching the query, and their total.", pagedBody, exPaged, page(stateOnly)},
		{"count", "queryCount", "The number of snapshots matching the condition.", condBody, map[string]any{"operator": "ALL"},
			openapi3.NewSchemaRef("", openapi3.NewInt64Schema().WithMin(0))},
	} {
		op := newOp(q.id, q.summary, roleRead)
		op.Description = "Scoped to the request's tenant whatever the condition says; the planner's guards (list size, page size and window, condition size) apply."
		rb := openapi3.NewRequestBody().WithRequired(true)
		rb.Content = openapi3.Content{"application/json": &openapi3.MediaType{Schema: q.body, Example: q.example}}
		op.RequestBody = &openapi3.RequestBodyRef{Value: rb}
		op.Responses = b.responses(jsonOK("The result.", q.result, nil), queryErrors)
		b.add(seg+"/snapshot/"+q.path, http.MethodPost, op)
	}
}
