package order

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/projection"
)

// SummariesName is the name of the durable summaries projection: its
// consumer group is shop/order_summaries.
const SummariesName = "order_summaries"

// The durable summaries' logical tables (projection.Schema); tx.Table
// and Scope.From give their physical names, which carry the build
// number. Every row carries its tenant, and every key starts with it.
const (
	// SummariesTable holds one row per order: tenant, order_id, sku, qty,
	// status, reason, version (the order's stream version).
	SummariesTable = "summaries"
	// TotalsTable holds, per tenant, SKU and status, how many orders are
	// in that status and how many units they ask for: the stock report.
	TotalsTable = "totals"
)

// SummariesVersion is the summaries' schema version: a change of their
// tables or of what the function writes bumps it, and the next start
// rebuilds them beside the live ones.
const SummariesVersion = 1

// Total is one row of the stock report: the orders of a tenant for a SKU
// in one status, and the units they ask for.
type Total struct {
	Tenant string `json:"tenant"`
	SKU    string `json:"sku"`
	Status Status `json:"status"`
	Orders int    `json:"orders"`
	Qty    int    `json:"qty"`
}

// SummariesProjection returns the durable summaries projection: each
// order's summary in SummariesTable and the per-SKU, per-status totals in
// TotalsTable, written in the projection's transaction with its
// checkpoint, and its read queries (SummaryQueries). Its SQL is portable
// between SQLite and PostgreSQL.
//
// The totals are counters moved by each event (an order confirmed leaves
// pending and joins confirmed), so they are right only because every
// stream is applied exactly once: a stream applied twice would count its
// order twice.
func SummariesProjection(opts ...projection.Option) (*projection.Projection, error) {
	opts = append([]projection.Option{
		projection.From(Orders.Named()),
		projection.Events(orderEventNames...),
		projection.Schema(SummariesVersion, SummariesTable, TotalsTable),
		projection.Setup(setupSummaries),
		projection.Reset(resetSummaries),
	}, append(summaryQueries(), opts...)...)
	return projection.New(Context, SummariesName, ProjectSummaries, opts...)
}

// orderEventNames are the order events the summaries consume.
var orderEventNames = []string{"order_placed", "order_confirmed", "order_rejected"}

// summariesSchema creates the tables of tx's build; IF NOT EXISTS makes
// it idempotent, as Setup must be.
func summariesSchema(tx projection.Tx) []string {
	sums, totals := tx.Table(SummariesTable), tx.Table(TotalsTable)
	return []string{
		`CREATE TABLE IF NOT EXISTS ` + sums + ` (
			tenant   TEXT NOT NULL,
			order_id TEXT NOT NULL,
			sku      TEXT NOT NULL,
			qty      INTEGER NOT NULL,
			status   TEXT NOT NULL,
			reason   TEXT NOT NULL DEFAULT '',
			version  INTEGER NOT NULL,
			PRIMARY KEY (tenant, order_id))`,
		`CREATE INDEX IF NOT EXISTS ` + sums + `_status ON ` + sums + ` (tenant, status, order_id)`,
		`CREATE TABLE IF NOT EXISTS ` + totals + ` (
			tenant TEXT NOT NULL,
			sku    TEXT NOT NULL,
			status TEXT NOT NULL,
			orders INTEGER NOT NULL,
			qty    INTEGER NOT NULL,
			PRIMARY KEY (tenant, sku, status))`,
	}
}

func setupSummaries(ctx context.Context, tx projection.Tx) error {
	for _, q := range summariesSchema(tx) {
		if _, err := tx.Exec(ctx, q); err != nil {
			return fmt.Errorf("order summaries: %w", err)
		}
	}
	return nil
}

func resetSummaries(ctx context.Context, tx projection.Tx) error {
	for _, t := range []string{tx.Table(SummariesTable), tx.Table(TotalsTable)} {
		if _, err := tx.Exec(ctx, `DELETE FROM `+t); err != nil {
			return fmt.Errorf("order summaries: reset %s: %w", t, err)
		}
	}
	return nil
}

// ProjectSummaries applies one order stream to the summaries and totals
// within tx. It is the summaries projection's function.
func ProjectSummaries(ctx context.Context, tx projection.Tx, s *factum.EventStream) error {
	tenant, id := s.AggregateID.TenantOrDefault(), s.AggregateID.ID
	for i := range s.Events {
		e := &s.Events[i]
		var err error
		switch e.Name {
		case "order_placed":
			var v OrderPlaced
			if err = json.Unmarshal(e.Body, &v); err == nil {
				placeSummary(tx, tenant, id, v, s.Version)
			}
		case "order_confirmed":
			moveSummary(tx, tenant, id, Confirmed, "", s.Version)
		case "order_rejected":
			var v OrderRejected
			if err = json.Unmarshal(e.Body, &v); err == nil {
				moveSummary(tx, tenant, id, Rejected, v.Reason, s.Version)
			}
		default:
			continue
		}
		if err != nil {
			return fmt.Errorf("order summaries: %s of order %s@%s: %w", e.Name, id, tenant, err)
		}
	}
	return nil
}

// placeSummary records a new pending order. A plain INSERT: an order is
// placed once, so a second placement is an error, not an overwrite. Its
// statements are queued (Tx.Queue): the function reads nothing back, so
// a batch of streams goes to the database in one round trip.
func placeSummary(tx projection.Tx, tenant, id string, e OrderPlaced, version int) {
	tx.Queue(projection.Statement{SQL: `INSERT INTO ` + tx.Table(SummariesTable) + ` (tenant, order_id, sku, qty, status, reason, version)
		VALUES ($1, $2, $3, $4, $5, '', $6)`, Args: []any{tenant, id, e.SKU, e.Qty, string(Pending), version}})
	t := tx.Table(TotalsTable)
	tx.Queue(projection.Statement{SQL: `INSERT INTO ` + t + ` (tenant, sku, status, orders, qty) VALUES ($1, $2, $3, 1, $4)
		ON CONFLICT (tenant, sku, status) DO UPDATE SET orders = ` + t + `.orders + excluded.orders,
		qty = ` + t + `.qty + excluded.qty`, Args: []any{tenant, e.SKU, string(Pending), e.Qty}})
}

// moveSummary moves a pending order to status, and its units from the
// pending total to the new status's, in two queued statements: the
// totals' upsert takes the order's SKU and units from its summary. Only
// a pending order is confirmed or rejected (the order aggregate's rule),
// so an UPDATE that finds no pending summary fails the stream (the
// Check), which a stream applied twice would meet.
func moveSummary(tx projection.Tx, tenant, id string, status Status, reason string, version int) {
	sums, t := tx.Table(SummariesTable), tx.Table(TotalsTable)
	tx.Queue(projection.Statement{
		SQL: `UPDATE ` + sums + ` SET status = $1, reason = $2, version = $3
		WHERE tenant = $4 AND order_id = $5 AND status = $6`,
		Args: []any{string(status), reason, version, tenant, id, string(Pending)},
		Check: func(rows int64) error {
			if rows != 1 {
				return factum.IllegalState(fmt.Sprintf("order summaries: no pending summary of order %s@%s", id, tenant))
			}
			return nil
		},
	})
	tx.Queue(projection.Statement{SQL: `INSERT INTO ` + t + ` (tenant, sku, status, orders, qty)
		SELECT tenant, sku, CAST($3 AS TEXT), -1, -qty FROM ` + sums + ` WHERE tenant = $1 AND order_id = $2
		UNION ALL
		SELECT tenant, sku, CAST($4 AS TEXT), 1, qty FROM ` + sums + ` WHERE tenant = $1 AND order_id = $2
		ON CONFLICT (tenant, sku, status) DO UPDATE SET orders = ` + t + `.orders + excluded.orders,
		qty = ` + t + `.qty + excluded.qty`, Args: []any{tenant, id, string(Pending), string(status)}})
}
