package projection

import (
	"context"
	"fmt"

	"github.com/factum-go/factum"
)

// MaxLag is the most streams Status counts behind a checkpoint; a lag
// of MaxLag means at least that many.
const MaxLag = 10000

// Status is where a projection stands: its builds and how far behind the
// log's end each is.
type Status struct {
	// Context and Name identify the projection; Version is its code's
	// schema version (0 without a Schema).
	Context string `json:"context"`
	Name    string `json:"name"`
	Version int    `json:"version"`
	// Live is the build queries read; Next the build a rebuild fills,
	// nil when none is under way.
	Live *BuildStatus `json:"live,omitempty"`
	Next *BuildStatus `json:"next,omitempty"`
}

// BuildStatus is one build's progress.
type BuildStatus struct {
	Build
	// Checkpoint is the build's position in the log.
	Checkpoint factum.Position `json:"checkpoint"`
	// Lag is how many streams of the log follow the checkpoint (at most
	// MaxLag).
	Lag int `json:"lag"`
}

// Status returns the projection's builds and their lag.
func (r *Runner) Status(ctx context.Context) (Status, error) {
	s := Status{Context: r.p.Context(), Name: r.p.Name(), Version: r.p.version}
	if r.p.version == 0 {
		b, err := r.buildStatus(ctx, Build{}, r.p.group)
		if err != nil {
			return Status{}, err
		}
		s.Live = &b
		return s, nil
	}
	st, err := r.cfg.Store.State(ctx, r.p.Name())
	if err != nil {
		return Status{}, fmt.Errorf("projection %s: state: %w", r.p.group, err)
	}
	for _, x := range []struct {
		b   Build
		out **BuildStatus
	}{{st.Live, &s.Live}, {st.Next, &s.Next}} {
		if x.b.IsZero() {
			continue
		}
		b, err := r.buildStatus(ctx, x.b, r.p.BuildGroup(x.b.Number))
		if err != nil {
			return Status{}, err
		}
		*x.out = &b
	}
	return s, nil
}

func (r *Runner) buildStatus(ctx context.Context, b Build, group factum.Function) (BuildStatus, error) {
	tx, err := r.cfg.Store.Begin(ctx)
	if err != nil {
		return BuildStatus{}, fmt.Errorf("projection %s: status: %w", group, err)
	}
	pos, err := tx.Checkpoint(ctx, group)
	_ = tx.Rollback(context.WithoutCancel(ctx))
	if err != nil {
		return BuildStatus{}, fmt.Errorf("projection %s: status: %w", group, err)
	}
	out := BuildStatus{Build: b, Checkpoint: pos}
	for out.Lag < MaxLag {
		batch, err := r.cfg.Log.ReadLog(ctx, pos, min(1000, MaxLag-out.Lag))
		if err != nil {
			return BuildStatus{}, fmt.Errorf("projection %s: status: read log: %w", group, err)
		}
		if len(batch) == 0 {
			break
		}
		out.Lag += len(batch)
		pos = batch[len(batch)-1].Position
	}
	return out, nil
}

// Query runs the read query called name over the live build, in tenant:
// raw holds the request's parameters (one value each), parsed to their
// declared types; a bad one, an unknown query or a tenant a query cannot
// name is IllegalArgument (NotFound for the query). It runs outside any
// write transaction and returns at most the query's row limit of rows.
func (r *Runner) Query(ctx context.Context, tenant, name string, raw map[string]string) (Result, error) {
	q, ok := r.p.Query(name)
	if !ok {
		return Result{}, factum.NotFound(fmt.Sprintf("projection %s has no query %q", r.p.group, name))
	}
	if err := validQueryTenant(tenant); err != nil {
		return Result{}, err
	}
	args, limit, err := q.ParseArgs(raw)
	if err != nil {
		return Result{}, err
	}
	for attempt := 0; ; attempt++ {
		live := Build{}
		if r.p.version > 0 {
			st, err := r.cfg.Store.State(ctx, r.p.Name())
			if err != nil {
				return Result{}, fmt.Errorf("projection %s: state: %w", r.p.group, err)
			}
			if st.Live.IsZero() {
				return Result{}, factum.IllegalState(fmt.Sprintf("projection %s has no live build yet (its runner has not run)", r.p.group))
			}
			live = st.Live
		}
		sqlText, sqlArgs, err := build(q, Scope{tables: TablesOf(r.p, live.Number), tenant: tenant}, args)
		if err != nil {
			return Result{}, err
		}
		res, err := r.cfg.Store.Query(ctx, limit, sqlText, sqlArgs...)
		if err != nil {
			if attempt == 0 && r.p.version > 0 && ctx.Err() == nil {
				// A switch may have dropped the build between reading
				// the state and the query: read the state again once.
				if st, serr := r.cfg.Store.State(ctx, r.p.Name()); serr == nil && st.Live.Number != live.Number {
					continue
				}
			}
			return Result{}, fmt.Errorf("projection %s: query %s: %w", r.p.group, name, err)
		}
		res.Build, res.Version = live.Number, live.Version
		return res, nil
	}
}

// build calls the query's function, turning a panic into an
// InternalServerError.
func build(q *QuerySpec, s Scope, args Args) (sqlText string, sqlArgs []any, err error) {
	defer func() {
		if v := recover(); v != nil {
			err = factum.Errorf(factum.CodeInternalServerError, "projection query %s panicked: %v", q.name, v)
		}
	}()
	sqlText, sqlArgs, err = q.fn(s, args)
	if err != nil {
		return "", nil, fmt.Errorf("projection query %s: %w", q.name, err)
	}
	return sqlText, sqlArgs, nil
}

// Retry applies a stream whose failure was recorded (a compensation
// retry) once more, in one transaction: in each build (live, next) that
// marked the stream as failed when its runner passed it, the function
// writes the stream and the mark is removed. The checkpoints do not move.
// A stream no current build marks (it was applied since, or its build was
// replaced by a rebuild, which replayed the log) is nothing to do: Retry
// returns nil. A failure of the function rolls everything back and is
// returned.
func (r *Runner) Retry(ctx context.Context, s *factum.EventStream) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	builds := []Build{{}}
	tx, err := r.cfg.Store.Begin(ctx)
	if err != nil {
		return fmt.Errorf("projection %s: retry: %w", r.p.group, err)
	}
	defer func() { _ = tx.Rollback(context.WithoutCancel(ctx)) }()
	if r.p.version > 0 {
		st, err := tx.State(ctx, r.p.Name()) // held: no switch or drop meanwhile
		if err != nil {
			return fmt.Errorf("projection %s: retry: state: %w", r.p.group, err)
		}
		builds = []Build{st.Live, st.Next}
	}
	for _, b := range builds {
		if r.p.version > 0 && b.IsZero() {
			continue
		}
		g := r.p.BuildGroup(b.Number)
		if _, err := tx.Checkpoint(ctx, g); err != nil { // held: no batch meanwhile
			return fmt.Errorf("projection %s: retry: checkpoint: %w", g, err)
		}
		marked, err := tx.Unmark(ctx, g, s.ID)
		if err != nil {
			return fmt.Errorf("projection %s: retry: %w", g, err)
		}
		if !marked {
			continue
		}
		if err := r.invoke(ctx, tx.WithTables(TablesOf(r.p, b.Number)), s); err != nil {
			return err
		}
	}
	if err := tx.Commit(ctx); err != nil {
		return fmt.Errorf("projection %s: retry: commit: %w", r.p.group, err)
	}
	return nil
}
