package projection

import (
	"context"
	"fmt"
	"slices"

	"github.com/factum-go/factum"
)

// Tx is the transaction a projection writes its read model in. Queries use
// the database's own SQL dialect and placeholders.
type Tx interface {
	// Exec runs a statement and returns the number of rows it affected.
	Exec(ctx context.Context, query string, args ...any) (int64, error)
	// QueryRow runs a query expected to return at most one row.
	QueryRow(ctx context.Context, query string, args ...any) Row
}

// Row is one row of a query; Scan reports a missing row as the driver's
// no-rows error (sql.ErrNoRows, pgx.ErrNoRows).
type Row interface {
	Scan(dest ...any) error
}

// Func projects one stream into the read model within tx. It may run again
// for the same stream only after its earlier transaction rolled back, so
// it need not be idempotent.
type Func func(ctx context.Context, tx Tx, s *factum.EventStream) error

// Projection is a read model's definition: the events it consumes and the
// functions that create, write and reset its tables.
type Projection struct {
	group      factum.Function // Context and Processor; Name "project"
	events     []string
	aggregates []factum.NamedAggregate
	project    Func
	setup      func(ctx context.Context, tx Tx) error
	reset      func(ctx context.Context, tx Tx) error
}

// Option configures a Projection.
type Option func(*Projection)

// Events restricts the projection to streams holding one of these events;
// by default it receives every stream.
func Events(names ...string) Option {
	return func(p *Projection) { p.events = append(p.events, names...) }
}

// From restricts the projection to streams of these aggregate types.
func From(aggregates ...factum.NamedAggregate) Option {
	return func(p *Projection) { p.aggregates = append(p.aggregates, aggregates...) }
}

// Setup sets the function that creates the projection's tables; the runner
// calls it in its first transaction, so it must be idempotent (CREATE
// TABLE IF NOT EXISTS).
func Setup(fn func(ctx context.Context, tx Tx) error) Option {
	return func(p *Projection) { p.setup = fn }
}

// Reset sets the function that empties the projection's tables for a
// rebuild. Without it, Rebuild is refused.
func Reset(fn func(ctx context.Context, tx Tx) error) Option {
	return func(p *Projection) { p.reset = fn }
}

// New returns the projection context/name writing streams with fn. Its
// function identity is context/name/project.
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
	return p, nil
}

// Group returns the projection's consumer group: its checkpoint's key.
func (p *Projection) Group() factum.Function { return p.group }

// Function returns the identity its PROJECTED signals and failures carry.
func (p *Projection) Function() factum.Function {
	f := p.group
	f.Name = "project"
	return f
}

// Consumes reports whether the projection consumes the event name from an
// aggregate of the named type.
func (p *Projection) Consumes(named factum.NamedAggregate, eventName string) bool {
	if len(p.aggregates) > 0 && !slices.Contains(p.aggregates, named) {
		return false
	}
	return len(p.events) == 0 || slices.Contains(p.events, eventName)
}

// wants reports whether the stream holds an event the projection consumes.
func (p *Projection) wants(s *factum.EventStream) bool {
	for i := range s.Events {
		if p.Consumes(s.AggregateID.NamedAggregate, s.Events[i].Name) {
			return true
		}
	}
	return false
}
