package compensation

import (
	"context"
	"fmt"
	"time"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/query"
)

// Filter selects executions for Service.List and Service.Paged. Zero
// fields select everything; set fields are ANDed.
type Filter struct {
	// Status keeps executions in any of these statuses.
	Status []Status `json:"status,omitempty"`
	// Recoverability keeps executions with any of these.
	Recoverability []Recoverability `json:"recoverable,omitempty"`
	// Function keeps executions of matching functions; blank parts match
	// any value.
	Function factum.Function `json:"function,omitzero"`
	// Aggregate keeps executions of failed streams of this aggregate
	// type; blank parts match any value.
	Aggregate factum.NamedAggregate `json:"aggregate,omitzero"`
	// AggregateID keeps executions of failed streams of the aggregate
	// with this ID.
	AggregateID string `json:"aggregateId,omitempty"`
	// EventID keeps the executions of this event.
	EventID string `json:"eventId,omitempty"`
	// NeedsOperator keeps executions that are neither SUCCEEDED nor
	// retryable (unrecoverable, or out of retries): the ones waiting for
	// an operator.
	NeedsOperator bool `json:"needsOperator,omitempty"`
	// ErrorCode keeps executions whose last failure has this code.
	ErrorCode factum.Code `json:"errorCode,omitempty"`
	// FailedFrom and FailedTo keep executions whose last failure is at or
	// after FailedFrom and before FailedTo (to the millisecond); a zero
	// time bounds nothing.
	FailedFrom time.Time `json:"failedFrom,omitzero"`
	FailedTo   time.Time `json:"failedTo,omitzero"`
}

// Condition returns the filter as a condition over execution snapshots.
// An invalid status or recoverability is an IllegalArgument error.
func (f Filter) Condition() (query.Condition, error) {
	var cs []query.Condition
	if len(f.Status) > 0 {
		vs, err := validValues(f.Status, "status", "FAILED, PREPARED or SUCCEEDED")
		if err != nil {
			return query.Condition{}, err
		}
		cs = append(cs, query.In("state.status", vs...))
	}
	if len(f.Recoverability) > 0 {
		vs, err := validValues(f.Recoverability, "recoverability", "RECOVERABLE, UNRECOVERABLE or UNKNOWN")
		if err != nil {
			return query.Condition{}, err
		}
		cs = append(cs, query.In("state.recoverable", vs...))
	}
	for _, kv := range [...]struct{ path, v string }{
		{"state.function.context", f.Function.Context},
		{"state.function.processor", f.Function.Processor},
		{"state.function.name", f.Function.Name},
		{"state.aggregate.context", f.Aggregate.Context},
		{"state.aggregate.aggregate", f.Aggregate.Aggregate},
		{"state.aggregate.id", f.AggregateID},
		{"state.eventId", f.EventID},
	} {
		if kv.v != "" {
			cs = append(cs, query.Eq(kv.path, kv.v))
		}
	}
	if f.NeedsOperator {
		cs = append(cs, query.False("state.retryable"), query.Ne("state.status", string(StatusSucceeded)))
	}
	if f.ErrorCode != "" && !f.ErrorCode.Valid() {
		return query.Condition{}, factum.IllegalArgument(fmt.Sprintf("error code %q is not one of factum's codes", f.ErrorCode))
	}
	if f.ErrorCode != "" {
		cs = append(cs, query.Eq("state.error.code", string(f.ErrorCode)))
	}
	if !f.FailedFrom.IsZero() && !f.FailedTo.IsZero() && !f.FailedFrom.Before(f.FailedTo) {
		return query.Condition{}, factum.IllegalArgument("failedFrom must be before failedTo")
	}
	if !f.FailedFrom.IsZero() {
		cs = append(cs, query.Gte("state.failedAt", TimeOf(f.FailedFrom).Millis()))
	}
	if !f.FailedTo.IsZero() {
		cs = append(cs, query.Lt("state.failedAt", TimeOf(f.FailedTo).Millis()))
	}
	switch len(cs) {
	case 0:
		return query.All(), nil
	case 1:
		return cs[0], nil
	}
	return query.And(cs...), nil
}

// validValues returns xs as query values, or an IllegalArgument error naming
// the first that is not valid (what it is, and the valid names).
func validValues[T interface {
	~string
	Valid() bool
}](xs []T, what, valid string) ([]any, error) {
	vs := make([]any, len(xs))
	for i, x := range xs {
		if !x.Valid() {
			return nil, factum.IllegalArgument(fmt.Sprintf("%s %q: want %s", what, x, valid))
		}
		vs[i] = string(x)
	}
	return vs, nil
}

// listSort shows the latest failures first.
var listSort = []query.Sort{query.SortDesc("state.failedAt")}

// List returns up to limit executions matching f, latest failure first
// (limit 0 means the query guards' default list size).
func (s *Service) List(ctx context.Context, f Filter, limit int) ([]Item, error) {
	cond, err := f.Condition()
	if err != nil {
		return nil, err
	}
	qs, err := s.Queries()
	if err != nil {
		return nil, err
	}
	snaps, err := qs.List(ctx, query.Query{Condition: cond, Sort: listSort, Limit: limit})
	if err != nil {
		return nil, err
	}
	out := make([]Item, len(snaps))
	for i := range snaps {
		if out[i], err = itemOf(snaps[i]); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// Paged returns one page of the executions matching f, latest failure
// first, and their total.
func (s *Service) Paged(ctx context.Context, f Filter, page query.Pagination) (query.Paged[Item], error) {
	cond, err := f.Condition()
	if err != nil {
		return query.Paged[Item]{}, err
	}
	qs, err := s.Queries()
	if err != nil {
		return query.Paged[Item]{}, err
	}
	p, err := qs.Paged(ctx, query.PagedQuery{Condition: cond, Sort: listSort, Pagination: page})
	if err != nil {
		return query.Paged[Item]{}, err
	}
	out := query.Paged[Item]{Total: p.Total, List: make([]Item, len(p.List))}
	for i := range p.List {
		if out.List[i], err = itemOf(p.List[i]); err != nil {
			return query.Paged[Item]{}, err
		}
	}
	return out, nil
}

// Counts is the number of executions by status: the metrics hook for the
// compensation backlog (FAILED and PREPARED) and for what waits for an
// operator (Blocked).
type Counts struct {
	// Failed, Prepared and Succeeded count the executions in each status.
	Failed    int64 `json:"failed"`
	Prepared  int64 `json:"prepared"`
	Succeeded int64 `json:"succeeded"`
	// Blocked counts the executions neither SUCCEEDED nor retryable:
	// unrecoverable, or out of retries.
	Blocked int64 `json:"blocked"`
}

// Counts counts the service's executions by status, from the snapshot
// store. The counts are separate queries, so under concurrent changes they
// may not add up to one instant.
func (s *Service) Counts(ctx context.Context) (Counts, error) {
	qs, err := s.Queries()
	if err != nil {
		return Counts{}, err
	}
	var c Counts
	for _, q := range [...]struct {
		dst  *int64
		cond query.Condition
	}{
		{&c.Failed, query.Eq("state.status", string(StatusFailed))},
		{&c.Prepared, query.Eq("state.status", string(StatusPrepared))},
		{&c.Succeeded, query.Eq("state.status", string(StatusSucceeded))},
		{&c.Blocked, query.And(query.False("state.retryable"), query.Ne("state.status", string(StatusSucceeded)))},
	} {
		if *q.dst, err = qs.Count(ctx, q.cond); err != nil {
			return Counts{}, fmt.Errorf("compensation: count executions: %w", err)
		}
	}
	return c, nil
}
