package summariestest

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/event"
	"github.com/factum-go/factum/examples/order"
	"github.com/factum-go/factum/projection"
)

// Model is the summaries' read model: summaries by tenant/order and the
// non-zero totals by tenant/sku/status.
type Model struct {
	Summaries map[string]order.Summary
	Totals    map[string]order.Total
}

func summaryKey(tenant, id string) string { return tenant + "/" + id }

func totalKey(tenant, sku string, st order.Status) string {
	return tenant + "/" + sku + "/" + string(st)
}

// Fold applies the order streams of the log to an empty model, in log
// order. It is a second implementation of the projection, in Go.
func Fold(streams []factum.EventStream) (Model, error) {
	m := Model{Summaries: map[string]order.Summary{}, Totals: map[string]order.Total{}}
	add := func(tenant, sku string, st order.Status, n, qty int) {
		k := totalKey(tenant, sku, st)
		t := m.Totals[k]
		t.Tenant, t.SKU, t.Status = tenant, sku, st
		t.Orders += n
		t.Qty += qty
		if t.Orders == 0 && t.Qty == 0 {
			delete(m.Totals, k)
			return
		}
		m.Totals[k] = t
	}
	for _, s := range streams {
		if s.AggregateID.NamedAggregate != order.Orders.Named() {
			continue
		}
		tenant, id := s.AggregateID.TenantOrDefault(), s.AggregateID.ID
		k := summaryKey(tenant, id)
		for _, e := range s.Events {
			v := m.Summaries[k]
			switch e.Name {
			case "order_placed":
				var p order.OrderPlaced
				if err := json.Unmarshal(e.Body, &p); err != nil {
					return Model{}, err
				}
				v = order.Summary{OrderID: id, Tenant: tenant, SKU: p.SKU, Qty: p.Qty, Status: order.Pending}
				add(tenant, p.SKU, order.Pending, 1, p.Qty)
			case "order_confirmed", "order_rejected":
				add(tenant, v.SKU, v.Status, -1, -v.Qty)
				v.Status = order.Confirmed
				if e.Name == "order_rejected" {
					var r order.OrderRejected
					if err := json.Unmarshal(e.Body, &r); err != nil {
						return Model{}, err
					}
					v.Status, v.Reason = order.Rejected, r.Reason
				}
				add(tenant, v.SKU, v.Status, 1, v.Qty)
			default:
				continue
			}
			v.Version = s.Version
			m.Summaries[k] = v
		}
	}
	return m, nil
}

// ReadLog returns the whole global log.
func ReadLog(ctx context.Context, log event.LogReader) ([]factum.EventStream, error) {
	var all []factum.EventStream
	var pos factum.Position
	for {
		batch, err := log.ReadLog(ctx, pos, 1000)
		if err != nil {
			return nil, err
		}
		if len(batch) == 0 {
			return all, nil
		}
		all = append(all, batch...)
		pos = batch[len(batch)-1].Position
	}
}

// read loads the tables t names (a build's).
func read(ctx context.Context, query querier, t projection.Tables) (Model, error) {
	m := Model{Summaries: map[string]order.Summary{}, Totals: map[string]order.Total{}}
	err := query(ctx, `SELECT tenant, order_id, sku, qty, status, reason, version FROM `+t.Name(order.SummariesTable),
		func(scan func(...any) error) error {
			var v order.Summary
			var st string
			if err := scan(&v.Tenant, &v.OrderID, &v.SKU, &v.Qty, &st, &v.Reason, &v.Version); err != nil {
				return err
			}
			v.Status = order.Status(st)
			m.Summaries[summaryKey(v.Tenant, v.OrderID)] = v
			return nil
		})
	if err != nil {
		return Model{}, err
	}
	err = query(ctx, `SELECT tenant, sku, status, orders, qty FROM `+t.Name(order.TotalsTable)+` WHERE orders <> 0 OR qty <> 0`,
		func(scan func(...any) error) error {
			var t order.Total
			var st string
			if err := scan(&t.Tenant, &t.SKU, &st, &t.Orders, &t.Qty); err != nil {
				return err
			}
			t.Status = order.Status(st)
			m.Totals[totalKey(t.Tenant, t.SKU, t.Status)] = t
			return nil
		})
	if err != nil {
		return Model{}, err
	}
	return m, nil
}

// Diff describes how got differs from want, or returns "" when they are
// equal.
func Diff(want, got Model) string {
	var b strings.Builder
	diff(&b, "summary", want.Summaries, got.Summaries)
	diff(&b, "total", want.Totals, got.Totals)
	return b.String()
}

func diff[V comparable](b *strings.Builder, what string, want, got map[string]V) {
	n := 0
	for _, k := range slices.Sorted(maps.Keys(want)) {
		if g, ok := got[k]; !ok || g != want[k] {
			if n++; n <= 5 {
				fmt.Fprintf(b, "%s %s: want %+v, got %+v (present %v)\n", what, k, want[k], g, ok)
			}
		}
	}
	for _, k := range slices.Sorted(maps.Keys(got)) {
		if _, ok := want[k]; !ok {
			if n++; n <= 5 {
				fmt.Fprintf(b, "%s %s: not in the log, got %+v\n", what, k, got[k])
			}
		}
	}
	if n > 5 {
		fmt.Fprintf(b, "… %d %s differences in all\n", n, what)
	}
}
