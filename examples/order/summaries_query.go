package order

import (
	"strconv"
	"strings"

	"github.com/factum-go/factum/projection"
)

// The summaries' read queries, served over HTTP as
// GET /shop/projection/order_summaries/{query}?param=… in the request's
// tenant.
const (
	// QueryOrder returns one order's summary: ?id=ORDER (required).
	QueryOrder = "order"
	// QueryOrders lists summaries by order ID: ?status=…&sku=… (both
	// optional).
	QueryOrders = "orders"
	// QueryTotals is the stock report, orders and units per SKU and
	// status: ?sku=… (optional).
	QueryTotals = "totals"
)

// summaryQueries declares the read queries. Each reaches the tables only
// through scope.From, which holds the caller's tenant's rows of the live
// build.
func summaryQueries() []projection.Option {
	return []projection.Option{
		projection.Query(QueryOrder, func(scope projection.Scope, a projection.Args) (string, []any, error) {
			return `SELECT order_id, sku, qty, status, reason, version FROM ` + scope.From(SummariesTable) +
				` WHERE order_id = $1`, []any{a.String("id")}, nil
		}, projection.Param("id", projection.String, true), projection.MaxRows(1),
			projection.Describe("One order's summary: its SKU, quantity, status and the order's version.")),

		projection.Query(QueryOrders, func(scope projection.Scope, a projection.Args) (string, []any, error) {
			where, args := filters(a, "status", "sku")
			return `SELECT order_id, sku, qty, status, reason, version FROM ` + scope.From(SummariesTable) +
				where + ` ORDER BY order_id`, args, nil
		}, projection.Param("status", projection.String, false), projection.Param("sku", projection.String, false),
			projection.MaxRows(500), projection.Describe("Order summaries by order ID, optionally of one status and one SKU.")),

		projection.Query(QueryTotals, func(scope projection.Scope, a projection.Args) (string, []any, error) {
			where, args := filters(a, "sku")
			if where == "" {
				where = ` WHERE orders <> 0`
			} else {
				where += ` AND orders <> 0`
			}
			return `SELECT sku, status, orders, qty FROM ` + scope.From(TotalsTable) + where +
				` ORDER BY sku, status`, args, nil
		}, projection.Param("sku", projection.String, false), projection.MaxRows(500),
			projection.Describe("Orders and units per SKU and status (pending, confirmed, rejected), optionally of one SKU.")),
	}
}

// filters returns a WHERE clause matching each given parameter to the
// column of the same name, with its arguments.
func filters(a projection.Args, columns ...string) (string, []any) {
	var conds []string
	var args []any
	for _, c := range columns {
		if a.Has(c) {
			args = append(args, a.String(c))
			conds = append(conds, c+" = $"+strconv.Itoa(len(args)))
		}
	}
	if len(conds) == 0 {
		return "", nil
	}
	return " WHERE " + strings.Join(conds, " AND "), args
}
