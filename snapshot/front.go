package snapshot

import (
	"context"
	"fmt"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/internal/built"
	"github.com/factum-go/factum/query"
)

// Config configures a front end. The zero value serves every bounded
// context.
type Config struct {
	// Context, when set, is the one bounded context the store serves:
	// identities of any other are IllegalArgument (a SQL store's table
	// holds one context). Empty: any context.
	Context string
	// Name prefixes the front end's own errors ("sqlite", "postgres");
	// empty: "snapshot".
	Name string
}

// Front is the snapshot store's front end: the one implementation of the
// QueryStore contract's checks over any [Backend]. It checks the context
// and the input before the backend sees them, normalizes what it saves
// (tenant, times), turns the backend's outcomes into the contract's
// answers and errors (built from the caller's identity, so every backend
// reports the same codes), and chooses the queries' fast path ([Finder])
// or their generic fallback.
//
// Backends apply it in their constructors, so users never meet the split:
// [NewMemory], sqlite.NewSnapshotStore and postgres.NewSnapshotStore
// return types that embed a front end and are QueryStores through it. A
// Front is safe for concurrent use.
type Front struct {
	b       Backend
	finder  Finder // nil: the fallback
	context string
	name    string
}

// New returns the front end over b.
func New(b Backend, cfg Config) (*Front, error) {
	if b == nil {
		return nil, factum.IllegalArgument("snapshot: New: nil backend")
	}
	f := &Front{}
	f.init(b, cfg)
	return f, nil
}

// init sets f up over b.
func (f *Front) init(b Backend, cfg Config) {
	f.b = b
	f.finder, _ = b.(Finder)
	f.context = cfg.Context
	f.name = cfg.Name
	if f.name == "" {
		f.name = "snapshot"
	}
}

// Backend returns the backend under the front end, as database/sql's
// DB.Driver does: for contract kits and diagnostics. Calling it directly
// skips every check the front end makes.
func (f *Front) Backend() Backend { return f.b }

// serves refuses aggregates of another bounded context than the store's.
func (f *Front) serves(named factum.NamedAggregate) error {
	if f.context != "" && named.Context != f.context {
		return factum.IllegalArgument(fmt.Sprintf("%s: the snapshot store of context %q cannot serve %s", f.name, f.context, named))
	}
	return nil
}

// checkSave makes the checks of a save and returns s as the backend gets
// it: the tenant explicit, times to the millisecond; the state is still
// the caller's.
func (f *Front) checkSave(s *Snapshot, vouched bool) error {
	if vouched {
		if err := s.validateFields(); err != nil {
			return err
		}
		if len(s.State) == 0 {
			return factum.IllegalArgument(fmt.Sprintf("snapshot of %s: state is not valid JSON", s.AggregateID))
		}
	} else if err := s.Validate(); err != nil {
		return err
	}
	if err := f.serves(s.AggregateID.NamedAggregate); err != nil {
		return err
	}
	s.normalize()
	return nil
}

// Save implements Store.
func (f *Front) Save(ctx context.Context, s Snapshot) (bool, error) {
	return f.save(ctx, s, false)
}

// SaveEncoded is Save for a snapshot whose state the aggregate executor
// encoded (see built.EncodedState): it skips the check that the state is
// JSON, which cannot fail for it. Only the module's snapshotter can call
// it.
func (f *Front) SaveEncoded(ctx context.Context, s Snapshot, _ built.EncodedState) (bool, error) {
	return f.save(ctx, s, true)
}

// BuiltStateOwner implements built.StateSaver: a type embedding f saves
// vouched states by f's SaveEncoded only if it declares the method too.
func (f *Front) BuiltStateOwner() built.Owner { return built.OwnedBy(f) }

// save is Save, without the JSON check of the state when vouched.
func (f *Front) save(ctx context.Context, s Snapshot, vouched bool) (bool, error) {
	if err := ctx.Err(); err != nil {
		return false, err
	}
	if err := f.checkSave(&s, vouched); err != nil {
		return false, err
	}
	o, err := f.b.Save(ctx, s)
	switch {
	case err != nil:
		return false, err
	case o == Saved:
		return true, nil
	case o == Stale:
		return false, nil
	case o == RefusedTenant:
		return false, tenantMismatch(s.AggregateID)
	}
	return false, factum.Errorf(factum.CodeInternalServerError, "%s: save snapshot of %s v%d: the backend answered %d", f.name, s.AggregateID, s.Version, o)
}

// Load implements Store.
func (f *Front) Load(ctx context.Context, id factum.AggregateID) (Snapshot, error) {
	if err := ctx.Err(); err != nil {
		return Snapshot{}, err
	}
	if err := id.Validate(); err != nil {
		return Snapshot{}, err
	}
	if err := f.serves(id.NamedAggregate); err != nil {
		return Snapshot{}, err
	}
	s, ok, err := f.b.Load(ctx, id)
	switch {
	case err != nil:
		return Snapshot{}, err
	case !ok:
		return Snapshot{}, NotFound(id)
	case s.AggregateID.Tenant != id.TenantOrDefault():
		return Snapshot{}, tenantMismatch(id)
	}
	return s, nil
}

// checkQuery makes the checks of a query of the aggregate type.
func (f *Front) checkQuery(ctx context.Context, named factum.NamedAggregate) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := named.Validate(); err != nil {
		return err
	}
	return f.serves(named)
}

// Find implements Querier.
func (f *Front) Find(ctx context.Context, named factum.NamedAggregate, plan query.Plan) ([]Snapshot, error) {
	if err := f.checkQuery(ctx, named); err != nil {
		return nil, err
	}
	if f.finder != nil {
		return f.finder.Find(ctx, named, plan)
	}
	return find(ctx, f.b, named, plan)
}

// Count implements Querier.
func (f *Front) Count(ctx context.Context, named factum.NamedAggregate, cond query.Condition) (int64, error) {
	if err := f.checkQuery(ctx, named); err != nil {
		return 0, err
	}
	if f.finder != nil {
		return f.finder.Count(ctx, named, cond)
	}
	return count(ctx, f.b, named, cond)
}

var _ QueryStore = (*Front)(nil)
