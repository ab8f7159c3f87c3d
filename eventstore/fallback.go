package eventstore

import (
	"context"
	"slices"
	"strings"
	"time"

	"github.com/factum-go/factum"
)

// The generic fallbacks of the optional fast paths, over the small
// Backend contract alone. They answer exactly as the contract says, and
// the kit holds every fast path to them.

// findRequest looks for the request in the whole aggregate: found only in
// id's tenant, as the contract seals tenants off.
func findRequest(ctx context.Context, b Backend, id factum.AggregateID, requestID string) (factum.EventStream, bool, error) {
	all, err := b.Load(ctx, id, 1, MaxVersion)
	if err != nil {
		return factum.EventStream{}, false, err
	}
	tenant := id.TenantOrDefault()
	for _, s := range all {
		if s.RequestID == requestID && s.AggregateID.TenantOrDefault() == tenant {
			return s, true, nil
		}
	}
	return factum.EventStream{}, false, nil
}

// loadByTime keeps the aggregate's streams created in [start, end).
func loadByTime(ctx context.Context, b Backend, id factum.AggregateID, start, end time.Time) ([]factum.EventStream, error) {
	all, err := b.Load(ctx, id, 1, MaxVersion)
	if err != nil {
		return nil, err
	}
	out := all[:0]
	for _, s := range all {
		if !s.CreateTime.Before(start) && s.CreateTime.Before(end) {
			out = append(out, s)
		}
	}
	return out, nil
}

// scanPage is how many streams the scan fallback reads a time.
const scanPage = 1000

// scanAggregateIDs reads the whole log for the type's creating streams.
func scanAggregateIDs(ctx context.Context, b Backend, named factum.NamedAggregate, afterID string, limit int) ([]factum.AggregateID, error) {
	ids := []factum.AggregateID{}
	var pos factum.Position
	for {
		page, err := b.ReadLog(ctx, pos, scanPage)
		if err != nil {
			return nil, err
		}
		if len(page) == 0 {
			break
		}
		for _, s := range page {
			if s.Version == 1 && s.AggregateID.NamedAggregate == named && s.AggregateID.ID > afterID {
				ids = append(ids, factum.AggregateID{NamedAggregate: named, ID: s.AggregateID.ID, Tenant: s.AggregateID.TenantOrDefault()})
			}
		}
		pos = page[len(page)-1].Position
	}
	slices.SortFunc(ids, func(a, b factum.AggregateID) int { return strings.Compare(a.ID, b.ID) })
	if len(ids) > limit {
		ids = ids[:limit]
	}
	return ids, nil
}

// waitLog looks at the log every poll until it holds a stream after
// position after, woken is closed, or ctx ends.
func waitLog(ctx context.Context, b Backend, after factum.Position, woken <-chan struct{}, poll time.Duration) error {
	t := time.NewTimer(poll)
	defer t.Stop()
	for {
		page, err := b.ReadLog(ctx, after, 1)
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if err != nil {
			return err
		}
		if len(page) > 0 {
			return nil
		}
		select {
		case <-woken:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
			t.Reset(poll)
		}
	}
}
