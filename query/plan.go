package query

import (
	"fmt"
	"math"
	"time"
)

// Fields names the standard fields of the documents a Planner plans for:
// where the identity, tenant, owner and deletion operators look, and which
// field breaks sort ties. A zero field takes its default (DefaultFields).
type Fields struct {
	// ID is the document's unique ID (OpID, OpIDs, the sort tie-breaker).
	ID string
	// AggregateID is the aggregate ID (OpAggregateID, OpAggregateIDs).
	AggregateID string
	// Tenant is the tenant ID (OpTenant, tenant scoping).
	Tenant string
	// Owner is the owner ID (OpOwner).
	Owner string
	// Deleted is the deletion flag (OpDeleted and the default exclusion of
	// deleted documents), a JSON bool.
	Deleted string
}

// DefaultFields returns the fields of a snapshot document: "aggregateId"
// (both the ID and the aggregate ID), "tenantId", "ownerId" and "deleted".
func DefaultFields() Fields {
	return Fields{ID: "aggregateId", AggregateID: "aggregateId", Tenant: "tenantId", Owner: "ownerId", Deleted: "deleted"}
}

func (f Fields) resolved() Fields {
	d := DefaultFields()
	def := func(v *string, dv string) {
		if *v == "" {
			*v = dv
		}
	}
	def(&f.ID, d.ID)
	def(&f.AggregateID, d.AggregateID)
	def(&f.Tenant, d.Tenant)
	def(&f.Owner, d.Owner)
	def(&f.Deleted, d.Deleted)
	return f
}

// Planner checks queries against its Limits and turns them into Plans that
// every backend runs identically. Its zero value is ready to use: default
// limits, default fields, the system clock and time.Local. A Planner is a
// value; copies are independent and safe for concurrent use.
type Planner struct {
	// Limits are the guards; zero fields take their defaults.
	Limits Limits
	// Fields names the standard document fields; zero fields take their
	// defaults.
	Fields Fields
	// Now is the clock date-relative operators are resolved against; nil
	// means time.Now.
	Now func() time.Time
	// Location is where days, weeks and months begin, unless a condition
	// names its own zone; nil means time.Local.
	Location *time.Location
	// Tenant, when not empty, scopes every plan to that tenant: the plan's
	// condition is ANDed with "tenant field equals Tenant", whatever the
	// query says.
	Tenant string
}

// Plan is a checked query ready to run. Its Condition holds core operators
// only (see CoreOperators): identities, deletion and dates are lowered to
// field comparisons, the default exclusion of deleted documents and the
// tenant scope are added. Its Sort is explicit and ends in the ID field, so
// the order is total. Backends run a Plan; they never see a raw Query.
type Plan struct {
	// Condition selects the documents (core operators only).
	Condition Condition
	// Projection selects the fields of each result; its Include lists the
	// ID field unless the query excluded it.
	Projection Projection
	// Sort orders the results: Field and an explicit Direction per key,
	// the last key on the ID field.
	Sort []Sort
	// Offset is the number of matching documents to skip.
	Offset int
	// Limit is the maximum number of results, at least 1.
	Limit int
}

// List plans a list query.
func (p Planner) List(q Query) (Plan, error) {
	lim := p.Limits.resolved()
	limit, err := resolveSize(q.Limit, lim.DefaultListSize, lim.MaxListSize, "list limit", "list size")
	if err != nil {
		return Plan{}, err
	}
	return p.plan(q.Condition, q.Projection, q.Sort, 0, limit)
}

// resolveSize resolves a requested number of results n, named what: 0 is def,
// and a negative one or one above max (the maximum named maxName; a
// negative max is none) is an IllegalArgument error.
func resolveSize(n, def, max int, what, maxName string) (int, error) {
	switch {
	case n < 0:
		return 0, illegal(fmt.Sprintf("%s %d is negative", what, n))
	case n == 0:
		return def, nil
	case exceeds(n, max):
		return 0, illegal(fmt.Sprintf("%s %d is above the maximum %s %d", what, n, maxName, max))
	}
	return n, nil
}

// Single plans a query for its first result; q.Limit is ignored.
func (p Planner) Single(q Query) (Plan, error) {
	return p.plan(q.Condition, q.Projection, q.Sort, 0, 1)
}

// Paged plans a paged query. The plan's Offset and Limit select the page;
// the total is the count of the plan's Condition.
func (p Planner) Paged(q PagedQuery) (Plan, error) {
	lim := p.Limits.resolved()
	index, size := q.Pagination.Index, q.Pagination.Size
	if index < 0 {
		return Plan{}, illegal(fmt.Sprintf("page index %d is negative; pages start at 1", index))
	}
	if index == 0 {
		index = 1
	}
	size, err := resolveSize(size, lim.DefaultPageSize, lim.MaxPageSize, "page size", "page size")
	if err != nil {
		return Plan{}, err
	}
	if index > math.MaxInt32 || size > math.MaxInt32 {
		return Plan{}, illegal(fmt.Sprintf("page %d of size %d is out of range", index, size))
	}
	window := int64(index) * int64(size)
	if lim.MaxPageWindow >= 0 && window > int64(lim.MaxPageWindow) {
		return Plan{}, illegal(fmt.Sprintf("page %d of size %d reaches result %d, beyond the page window %d; narrow the condition instead of paging deeper", index, size, window, lim.MaxPageWindow))
	}
	if window > math.MaxInt32 {
		return Plan{}, illegal(fmt.Sprintf("page %d of size %d is out of range", index, size))
	}
	return p.plan(q.Condition, q.Projection, q.Sort, (index-1)*size, size)
}

// Count plans a count: it returns the lowered condition, with the deletion
// default and tenant scope, that a backend counts.
func (p Planner) Count(c Condition) (Condition, error) {
	return p.condition(c)
}

func (p Planner) plan(c Condition, proj Projection, sort []Sort, offset, limit int) (Plan, error) {
	cond, err := p.condition(c)
	if err != nil {
		return Plan{}, err
	}
	lim, fields := p.Limits.resolved(), p.Fields.resolved()
	pl := Plan{Condition: cond, Offset: offset, Limit: limit}
	if pl.Sort, err = planSort(sort, lim, fields); err != nil {
		return Plan{}, err
	}
	if pl.Projection, err = planProjection(proj, lim, fields); err != nil {
		return Plan{}, err
	}
	return pl, nil
}

func (p Planner) condition(c Condition) (Condition, error) {
	lw := lowerer{
		limits: p.Limits.resolved(),
		fields: p.Fields.resolved(),
		now:    time.Now,
		loc:    p.Location,
	}
	if p.Now != nil {
		lw.now = p.Now
	}
	if lw.loc == nil {
		lw.loc = time.Local
	}
	out, err := lw.lower(c, false)
	if err != nil {
		return Condition{}, err
	}
	parts := []Condition{out}
	if !NamesDeletion(c, lw.fields) {
		parts = append(parts, Condition{Field: lw.fields.Deleted, Operator: OpNe, Value: true})
	}
	if p.Tenant != "" {
		parts = append(parts, Condition{Field: lw.fields.Tenant, Operator: OpEq, Value: p.Tenant})
	}
	return and(parts...), nil
}

// NamesDeletion reports whether c selects by deletion itself: it holds an
// OpDeleted node, or a node on the fields' Deleted field outside
// ELEM_MATCH. A Planner excludes deleted documents from every condition
// that does not.
func NamesDeletion(c Condition, fields Fields) bool {
	fields = fields.resolved()
	if c.Operator == OpDeleted || c.Operator != OpElemMatch && c.Field != "" && c.Field == fields.Deleted {
		return true
	}
	if c.Operator == OpElemMatch {
		return false
	}
	for _, ch := range c.Children {
		if NamesDeletion(ch, fields) {
			return true
		}
	}
	return false
}

// and combines conditions, flattening nested ANDs and dropping ALLs.
func and(cs ...Condition) Condition {
	out := make([]Condition, 0, len(cs)+2)
	for _, c := range cs {
		switch c.Operator {
		case OpAll:
		case OpAnd:
			out = append(out, c.Children...)
		default:
			out = append(out, c)
		}
	}
	switch len(out) {
	case 0:
		return All()
	case 1:
		return out[0]
	}
	return Condition{Operator: OpAnd, Children: out}
}

// checkSort checks the i-th sort key's field path and direction, and
// returns the direction (ASC or DESC; ASC when empty).
func checkSort(i int, s Sort) (Direction, error) {
	if err := checkPath(fmt.Sprintf("sort[%d]", i), s.Field); err != nil {
		return "", err
	}
	d, ok := parseDirection(s.Direction)
	if !ok {
		return "", illegal(fmt.Sprintf("sort[%d]: direction %q: want ASC or DESC", i, string(s.Direction)))
	}
	return d, nil
}

func planSort(sort []Sort, lim Limits, fields Fields) ([]Sort, error) {
	if exceeds(len(sort), lim.MaxSortFields) {
		return nil, illegal(fmt.Sprintf("%d sort fields, above the maximum %d", len(sort), lim.MaxSortFields))
	}
	out := make([]Sort, 0, len(sort)+1)
	hasID := false
	for i, s := range sort {
		d, err := checkSort(i, s)
		if err != nil {
			return nil, err
		}
		out = append(out, Sort{Field: s.Field, Direction: d})
		if s.Field == fields.ID {
			// The ID is unique: later keys can never matter.
			hasID = true
			break
		}
	}
	if !hasID {
		out = append(out, Sort{Field: fields.ID, Direction: Asc})
	}
	return out, nil
}

func planProjection(p Projection, lim Limits, fields Fields) (Projection, error) {
	if exceeds(len(p.Include)+len(p.Exclude), lim.MaxProjectionFields) {
		return Projection{}, illegal(fmt.Sprintf("%d projection fields, above the maximum %d", len(p.Include)+len(p.Exclude), lim.MaxProjectionFields))
	}
	var out Projection
	idIn, idOut := false, false
	for i, f := range p.Include {
		if err := checkPath(fmt.Sprintf("projection include[%d]", i), f); err != nil {
			return Projection{}, err
		}
		idIn = idIn || f == fields.ID
		out.Include = append(out.Include, f)
	}
	for i, f := range p.Exclude {
		if err := checkPath(fmt.Sprintf("projection exclude[%d]", i), f); err != nil {
			return Projection{}, err
		}
		idOut = idOut || f == fields.ID
		out.Exclude = append(out.Exclude, f)
	}
	if len(out.Include) > 0 && !idIn && !idOut {
		out.Include = append(out.Include, fields.ID)
	}
	return out, nil
}
