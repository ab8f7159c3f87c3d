package snapshot

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/query"
)

// QueryService answers queries over the snapshots of one aggregate type:
// Single, List, Paged and Count, each also as state only and as projected
// documents. Every query is planned by its query.Planner (limits, clock,
// location) over the snapshot document fields (query.DefaultFields):
// deleted snapshots are left out unless the condition names deletion, and
// a tenant-scoped service never returns another tenant's snapshot. A
// QueryService is immutable and safe for concurrent use.
type QueryService struct {
	store   Querier
	named   factum.NamedAggregate
	planner query.Planner
}

// NewQueryService returns the query service over the snapshots of named
// in store. The planner's Fields are replaced by the snapshot document
// fields and its Tenant is cleared: the service sees every tenant until
// ForTenant scopes it.
func NewQueryService(store Querier, named factum.NamedAggregate, planner query.Planner) (*QueryService, error) {
	if store == nil {
		return nil, factum.IllegalArgument("snapshot query service: no store")
	}
	if err := named.Validate(); err != nil {
		return nil, err
	}
	planner.Fields = query.DefaultFields()
	planner.Tenant = ""
	return &QueryService{store: store, named: named, planner: planner}, nil
}

// Aggregate returns the aggregate type the service queries.
func (s *QueryService) Aggregate() factum.NamedAggregate { return s.named }

// ForTenant returns a copy of the service that only ever sees the
// snapshots of tenant (empty means factum.DefaultTenant), whatever a
// query's condition says. Every tenant-facing route must use one.
func (s *QueryService) ForTenant(tenant string) (*QueryService, error) {
	if tenant == "" {
		tenant = factum.DefaultTenant
	}
	if err := factum.ValidateID("tenant", tenant); err != nil {
		return nil, err
	}
	c := *s
	c.planner.Tenant = tenant
	return &c, nil
}

// Tenant returns the tenant the service is scoped to, or "" when it sees
// every tenant.
func (s *QueryService) Tenant() string { return s.planner.Tenant }

// find plans nothing: it runs a plan and applies no projection.
func (s *QueryService) find(ctx context.Context, plan query.Plan) ([]Snapshot, error) {
	snaps, err := s.store.Find(ctx, s.named, plan)
	if err != nil {
		return nil, err
	}
	if len(snaps) > plan.Limit {
		return nil, factum.Errorf(factum.CodeInternalServerError, "snapshot store returned %d snapshots for a limit of %d", len(snaps), plan.Limit)
	}
	return snaps, nil
}

func (s *QueryService) single(ctx context.Context, q query.Query) (Snapshot, query.Plan, error) {
	plan, err := s.planner.Single(q)
	if err != nil {
		return Snapshot{}, plan, err
	}
	snaps, err := s.find(ctx, plan)
	if err != nil {
		return Snapshot{}, plan, err
	}
	if len(snaps) == 0 {
		return Snapshot{}, plan, factum.NotFound(fmt.Sprintf("no snapshot of %s matches the query", s.named))
	}
	return snaps[0], plan, nil
}

func (s *QueryService) list(ctx context.Context, q query.Query) ([]Snapshot, query.Plan, error) {
	plan, err := s.planner.List(q)
	if err != nil {
		return nil, plan, err
	}
	snaps, err := s.find(ctx, plan)
	return snaps, plan, err
}

// paged counts, then reads the page. The two reads are not one snapshot
// in time: under concurrent saves the total may differ from what the
// page shows by the snapshots saved in between.
func (s *QueryService) paged(ctx context.Context, q query.PagedQuery) ([]Snapshot, int64, query.Plan, error) {
	plan, err := s.planner.Paged(q)
	if err != nil {
		return nil, 0, plan, err
	}
	total, err := s.store.Count(ctx, s.named, plan.Condition)
	if err != nil {
		return nil, 0, plan, err
	}
	if int64(plan.Offset) >= total {
		return []Snapshot{}, total, plan, nil
	}
	snaps, err := s.find(ctx, plan)
	return snaps, total, plan, err
}

// Single returns the first snapshot matching q in its order, or a NotFound
// error. A projection zeroes the fields it leaves out.
func (s *QueryService) Single(ctx context.Context, q query.Query) (Snapshot, error) {
	snap, plan, err := s.single(ctx, q)
	if err != nil {
		return Snapshot{}, err
	}
	return s.project(plan.Projection, snap)
}

// List returns the snapshots matching q. A projection zeroes the fields
// it leaves out.
func (s *QueryService) List(ctx context.Context, q query.Query) ([]Snapshot, error) {
	snaps, plan, err := s.list(ctx, q)
	if err != nil {
		return nil, err
	}
	return s.projectAll(plan.Projection, snaps)
}

// Paged returns one page of the snapshots matching q and their total.
func (s *QueryService) Paged(ctx context.Context, q query.PagedQuery) (query.Paged[Snapshot], error) {
	snaps, total, plan, err := s.paged(ctx, q)
	if err != nil {
		return query.Paged[Snapshot]{}, err
	}
	list, err := s.projectAll(plan.Projection, snaps)
	return query.Paged[Snapshot]{Total: total, List: list}, err
}

// Count returns the number of snapshots matching c.
func (s *QueryService) Count(ctx context.Context, c query.Condition) (int64, error) {
	cond, err := s.planner.Count(c)
	if err != nil {
		return 0, err
	}
	return s.store.Count(ctx, s.named, cond)
}

// SingleState returns the state of the first snapshot matching q, or a
// NotFound error. With a projection, the state holds only the projected
// "state." paths (null when none).
func (s *QueryService) SingleState(ctx context.Context, q query.Query) (json.RawMessage, error) {
	snap, plan, err := s.single(ctx, q)
	if err != nil {
		return nil, err
	}
	return stateOf(plan.Projection, snap)
}

// ListState returns the states of the snapshots matching q.
func (s *QueryService) ListState(ctx context.Context, q query.Query) ([]json.RawMessage, error) {
	snaps, plan, err := s.list(ctx, q)
	if err != nil {
		return nil, err
	}
	return statesOf(plan.Projection, snaps)
}

// PagedState returns one page of the states of the snapshots matching q
// and their total.
func (s *QueryService) PagedState(ctx context.Context, q query.PagedQuery) (query.Paged[json.RawMessage], error) {
	snaps, total, plan, err := s.paged(ctx, q)
	if err != nil {
		return query.Paged[json.RawMessage]{}, err
	}
	list, err := statesOf(plan.Projection, snaps)
	return query.Paged[json.RawMessage]{Total: total, List: list}, err
}

// SingleDocument returns the projected document (see Snapshot.Document) of
// the first snapshot matching q, or a NotFound error.
func (s *QueryService) SingleDocument(ctx context.Context, q query.Query) (query.Document, error) {
	snap, plan, err := s.single(ctx, q)
	if err != nil {
		return nil, err
	}
	return documentOf(plan.Projection, snap)
}

// ListDocuments returns the projected documents of the snapshots matching
// q: the form HTTP responses and the query corpus use.
func (s *QueryService) ListDocuments(ctx context.Context, q query.Query) ([]query.Document, error) {
	snaps, plan, err := s.list(ctx, q)
	if err != nil {
		return nil, err
	}
	return documentsOf(plan.Projection, snaps)
}

// PagedDocuments returns one page of the projected documents of the
// snapshots matching q and their total.
func (s *QueryService) PagedDocuments(ctx context.Context, q query.PagedQuery) (query.Paged[query.Document], error) {
	snaps, total, plan, err := s.paged(ctx, q)
	if err != nil {
		return query.Paged[query.Document]{}, err
	}
	list, err := documentsOf(plan.Projection, snaps)
	return query.Paged[query.Document]{Total: total, List: list}, err
}

func documentOf(p query.Projection, snap Snapshot) (query.Document, error) {
	doc, err := snap.Document()
	if err != nil {
		return nil, err
	}
	if p.IsZero() {
		return doc, nil
	}
	return p.Apply(doc), nil
}

func documentsOf(p query.Projection, snaps []Snapshot) ([]query.Document, error) {
	out := make([]query.Document, len(snaps))
	for i, snap := range snaps {
		d, err := documentOf(p, snap)
		if err != nil {
			return nil, err
		}
		out[i] = d
	}
	return out, nil
}

func (s *QueryService) project(p query.Projection, snap Snapshot) (Snapshot, error) {
	if p.IsZero() {
		return snap, nil
	}
	doc, err := documentOf(p, snap)
	if err != nil {
		return Snapshot{}, err
	}
	return FromDocument(s.named, doc)
}

func (s *QueryService) projectAll(p query.Projection, snaps []Snapshot) ([]Snapshot, error) {
	if p.IsZero() {
		return snaps, nil
	}
	for i := range snaps {
		var err error
		if snaps[i], err = s.project(p, snaps[i]); err != nil {
			return nil, err
		}
	}
	return snaps, nil
}

func stateOf(p query.Projection, snap Snapshot) (json.RawMessage, error) {
	if p.IsZero() {
		return snap.State, nil
	}
	doc, err := documentOf(p, snap)
	if err != nil {
		return nil, err
	}
	b, err := json.Marshal(doc["state"])
	if err != nil {
		return nil, factum.Errorf(factum.CodeInternalServerError, "snapshot state does not encode: %w", err)
	}
	return b, nil
}

func statesOf(p query.Projection, snaps []Snapshot) ([]json.RawMessage, error) {
	out := make([]json.RawMessage, len(snaps))
	for i, snap := range snaps {
		st, err := stateOf(p, snap)
		if err != nil {
			return nil, err
		}
		out[i] = st
	}
	return out, nil
}
