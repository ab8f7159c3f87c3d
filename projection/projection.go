package projection

import (
	"context"
	"fmt"
	"slices"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/event"
)

// Tx is the transaction a projection writes its read model in. Queries use
// the database's own SQL dialect and placeholders.
type Tx interface {
	// Exec runs a statement and returns the number of rows it affected.
	Exec(ctx context.Context, query string, args ...any) (int64, error)
	// QueryRow runs a query expected to return at most one row.
	QueryRow(ctx context.Context, query string, args ...any) Row
	// Queue adds a statement whose outcome the function does not read
	// (an INSERT, an upsert, an UPDATE with a Check) to the transaction
	// without running it. Queued statements run in the order queued,
	// before the transaction's next Exec or QueryRow and before its
	// commit, so the function's own statements see their effects;
	// PostgreSQL sends all that are pending in one round trip, which
	// makes a batch of streams cost a few round trips instead of some
	// per stream. A queued statement's failure fails the stream that
	// queued it, as an error of its function would: its batch rolls
	// back, and the checkpoint does not pass it.
	Queue(s Statement)
	// Table returns the physical name of the projection's table declared
	// as name (Schema) in the build this transaction writes: a plain SQL
	// identifier, safe to splice into SQL. A projection without a Schema
	// gets name back unchanged. An undeclared name panics (the runner
	// turns the panic into the stream's failure).
	Table(name string) string
}

// Row is one row of a query; Scan reports a missing row as the driver's
// no-rows error (sql.ErrNoRows, pgx.ErrNoRows).
type Row interface {
	Scan(dest ...any) error
}

// Func projects one stream into the read model within tx. It may run again
// for the same stream only after its earlier transaction rolled back, so
// it need not be idempotent. It writes the tables tx.Table names, and every
// row it writes carries the stream's tenant in the column tenant
// (s.AggregateID.TenantOrDefault()): queries see only their caller's
// tenant's rows. An error that is an *event.EventError charges the
// stream's failure to the event it names, when that is an event of s. Its
// context carries the stream's tenant (factum.TenantFromContext), on a
// retry too, so that what it reaches with it (a prepare.PerTenant key) is
// scoped by that tenant.
type Func func(ctx context.Context, tx Tx, s *factum.EventStream) error

// Projection is a read model's definition: the events it consumes, its
// schema, the functions that create, write and reset its tables, and its
// read queries.
type Projection struct {
	group factum.Function // Context and Processor; Name ""
	// consumes holds the Events and Aggregates options: the projection
	// consumes what an event function with them would.
	consumes event.Handler
	project  Func
	setup    func(ctx context.Context, tx Tx) error
	reset    func(ctx context.Context, tx Tx) error

	version int      // Schema's version; 0 without a Schema
	tables  []string // Schema's tables
	queries []*QuerySpec
	errs    []error // options' errors, returned by New
}

// Option configures a Projection.
type Option func(*Projection)

// Events restricts the projection to streams holding one of these events;
// by default it receives every stream.
func Events(names ...string) Option {
	return func(p *Projection) { p.consumes.Events = append(p.consumes.Events, names...) }
}

// From restricts the projection to streams of these aggregate types.
func From(aggregates ...factum.NamedAggregate) Option {
	return func(p *Projection) { p.consumes.Aggregates = append(p.consumes.Aggregates, aggregates...) }
}

// Schema declares the projection's schema version (1 or more) and the
// logical names of its tables (lower-case letters, digits and '_', first a
// letter). Each build of the projection has tables of its own, named
// proj_<context>_<name>_<build>_<table> (Tx.Table gives the name), so a
// rebuild fills new tables beside the live ones and switches to them in
// one transaction. Deploying a higher (or any other) version than the live
// one starts that blue/green rebuild at the runner's start. Every table
// has a column tenant (checked after Setup). Names of indexes and
// constraints, which PostgreSQL keeps per schema, must derive from
// Tx.Table too (tx.Table("orders")+"_by_status").
func Schema(version int, tables ...string) Option {
	return func(p *Projection) {
		p.version = version
		p.tables = append(p.tables, tables...)
	}
}

// Setup sets the function that creates the projection's tables; the runner
// calls it in a transaction of its own for each build before it projects
// into it, so it must be idempotent (CREATE TABLE IF NOT EXISTS). It names
// the tables with tx.Table.
func Setup(fn func(ctx context.Context, tx Tx) error) Option {
	return func(p *Projection) { p.setup = fn }
}

// Reset sets the function that empties the projection's tables for
// Runner.ResetAndReplay. A projection with a Schema needs none: its tables
// are dropped and set up again.
func Reset(fn func(ctx context.Context, tx Tx) error) Option {
	return func(p *Projection) { p.reset = fn }
}

// New returns the projection context/name writing streams with fn. Its
// function identity is context/name/project. It validates the options:
// a Schema's version and table names (the physical names must fit in 63
// bytes), the queries' names and parameters.
func New(context, name string, fn Func, opts ...Option) (*Projection, error) {
	p := &Projection{group: factum.Function{Context: context, Processor: name}, project: fn}
	if err := (factum.Function{Context: context, Processor: name, Name: "project"}).Validate(); err != nil {
		return nil, err
	}
	if fn == nil {
		return nil, factum.IllegalArgument(fmt.Sprintf("projection %s/%s: no function", context, name))
	}
	for _, o := range opts {
		o(p)
	}
	if len(p.errs) > 0 {
		return nil, p.errs[0]
	}
	if err := p.validateSchema(); err != nil {
		return nil, err
	}
	if err := p.validateQueries(); err != nil {
		return nil, err
	}
	return p, nil
}

// Name returns the projection's name (its group's Processor).
func (p *Projection) Name() string { return p.group.Processor }

// Context returns the projection's bounded context.
func (p *Projection) Context() string { return p.group.Context }

// Version returns the schema version Schema declared, or 0.
func (p *Projection) Version() int { return p.version }

// Tables returns the logical table names Schema declared.
func (p *Projection) Tables() []string { return slices.Clone(p.tables) }

// Queries returns the projection's read queries, in declaration order.
func (p *Projection) Queries() []*QuerySpec { return slices.Clone(p.queries) }

// Query returns the read query called name.
func (p *Projection) Query(name string) (*QuerySpec, bool) {
	for _, q := range p.queries {
		if q.name == name {
			return q, true
		}
	}
	return nil, false
}

// Group returns the projection's consumer group: the checkpoint key of a
// projection without a Schema. A projection with one keeps a checkpoint
// per build (BuildGroup).
func (p *Projection) Group() factum.Function { return p.group }

// BuildGroup returns the checkpoint key of the projection's build number
// build: context/name/b<build>, or Group for build 0 (no Schema).
func (p *Projection) BuildGroup(build int) factum.Function {
	g := p.group
	if build > 0 {
		g.Name = fmt.Sprintf("b%d", build)
	}
	return g
}

// Function returns the identity its PROJECTED signals and failures carry.
func (p *Projection) Function() factum.Function {
	f := p.group
	f.Name = "project"
	return f
}

// Consumes reports whether the projection consumes the event name from an
// aggregate of the named type.
func (p *Projection) Consumes(named factum.NamedAggregate, eventName string) bool {
	return p.consumes.Consumes(named, eventName)
}

// wants reports whether the stream holds an event the projection consumes.
func (p *Projection) wants(s *factum.EventStream) bool { return p.consumes.Wants(s) }
