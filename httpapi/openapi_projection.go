package httpapi

import (
	"net/http"
	"reflect"

	"github.com/factum-go/factum/projection"
	"github.com/getkin/kin-openapi/openapi3"
)

// projectionTag tags the projection routes in the OpenAPI document.
const projectionTag = "projection"

// projectionDocRoutes adds every projection's read queries, with their
// declared parameters, and the admin's routes of each context.
func (b *docBuilder) projectionDocRoutes(c *projection.Component) {
	resultRef := b.sc.Define("projection.Result", reflect.TypeFor[projection.Result]())
	statusRef := b.sc.Define("projection.Status", reflect.TypeFor[projection.Status]())
	list := openapi3.NewArraySchema()
	list.Items = statusRef
	listRef := openapi3.NewSchemaRef("", list)
	op := func(method, path, id, summary, role string, ok *openapi3.Response, params openapi3.Parameters, errs []int) {
		o := openapi3.NewOperation()
		o.Tags, o.OperationID, o.Summary = []string{projectionTag}, id, summary
		secure(o, role)
		o.Parameters = params
		o.Responses = b.responses(ok, errs)
		b.add(path, method, o)
	}
	name := func() *openapi3.ParameterRef {
		return &openapi3.ParameterRef{Value: openapi3.NewPathParameter("name").WithDescription("The projection's name.").WithSchema(openapi3.NewStringSchema())}
	}
	contexts := map[string]bool{}
	for _, p := range c.Projections() {
		for _, q := range p.Queries() {
			params := openapi3.Parameters{}
			for _, pr := range q.Params() {
				qp := openapi3.NewQueryParameter(pr.Name).WithRequired(pr.Required).WithSchema(paramSchema(pr.Type).Value)
				params = append(params, &openapi3.ParameterRef{Value: qp})
			}
			limit := openapi3.NewIntegerSchema().WithMin(1).WithMax(float64(q.MaxRows())).WithDefault(q.MaxRows())
			params = append(params, &openapi3.ParameterRef{Value: openapi3.NewQueryParameter(projection.LimitParam).
				WithDescription("The most rows to return.").WithSchema(limit)})
			summary := q.Description()
			if summary == "" {
				summary = "Read query " + q.Name() + " of projection " + p.Name() + ", over the caller's tenant's rows."
			}
			op(http.MethodGet, "/"+p.Context()+"/"+projectionSegment+"/"+p.Name()+"/"+q.Name(),
				camel(projectionTag, p.Context(), p.Name(), q.Name()), summary, roleRead,
				jsonOK("The rows (at most the limit; truncated says there were more).", resultRef, nil), params, []int{400, 401, 403, 404, 409, 429, 500})
		}
		contexts[p.Context()] = true
	}
	for ctx := range contexts {
		base := "/" + ctx + "/" + projectionsSegment
		ok := jsonOK("The projection's status.", statusRef, nil)
		op(http.MethodGet, base, camel(projectionTag, ctx, "list"), "The projections of the context with their builds and lag.", roleAdmin,
			jsonOK("The projections.", listRef, nil), nil, readErrors)
		op(http.MethodGet, base+"/{name}", camel(projectionTag, ctx, "status"), "A projection's builds and lag.", roleAdmin,
			ok, openapi3.Parameters{name()}, readErrors)
		op(http.MethodPost, base+"/{name}/rebuild", camel(projectionTag, ctx, "rebuild"),
			"Start a blue/green rebuild: new tables filled from the log's start, switched to once caught up.", roleAdmin,
			ok, openapi3.Parameters{name()}, compensationErrors)
		op(http.MethodPost, base+"/{name}/reset", camel(projectionTag, ctx, "reset"),
			"Empty the live read model and replay the log into it (development: readers see it fill up).", roleAdmin,
			ok, openapi3.Parameters{name()}, compensationErrors)
	}
}

// paramSchema is the schema of a query parameter's type.
func paramSchema(t projection.ParamType) *openapi3.SchemaRef {
	switch t {
	case projection.Int:
		return openapi3.NewInt64Schema().NewRef()
	case projection.Bool:
		return openapi3.NewBoolSchema().NewRef()
	case projection.Time:
		return openapi3.NewDateTimeSchema().NewRef()
	}
	return openapi3.NewStringSchema().WithMaxLength(projection.MaxParamLen).NewRef()
}
