package projection

import (
	"context"
	"fmt"

	"github.com/factum-go/factum"
)

// newBuild returns the build numbered n of this code's schema version.
func (r *Runner) newBuild(n int) Build {
	return Build{Number: n, Version: r.p.version, Tables: TablesOf(r.p, n).All()}
}

// sync brings the builds' state in line with the code, in a transaction
// holding the state, when it is not (no build yet, a live build of another
// version without a build of this one, a retired build to drop), and then
// the lanes in line with the state.
func (r *Runner) sync(ctx context.Context) error {
	st, err := r.cfg.Store.State(ctx, r.p.Name())
	if err != nil {
		return fmt.Errorf("projection %s: state: %w", r.p.group, err)
	}
	if st.Live.IsZero() || !st.Retired.IsZero() || r.supersedes(st) {
		if st, err = r.transition(ctx); err != nil {
			return err
		}
	}
	r.live = r.laneFor(r.live, st.Live, st.Live.Version == r.p.version)
	r.next = r.laneFor(r.next, st.Next, st.Next.Version == r.p.version)
	if r.next != nil {
		// A version bump's build signals: its streams are in the model
		// that goes live, and no live lane runs meanwhile.
		r.next.signals = r.live == nil
	}
	return nil
}

// supersedes reports whether this code's schema version should replace
// the builds of st: it is higher than the live build's and than the
// next build's, if any. A lower version (an instance left behind in a
// rolling deploy) never starts a rebuild by itself, so instances of two
// versions do not take turns switching: it runs no lane until an
// operator's Rebuild asks for a build of its version.
func (r *Runner) supersedes(st State) bool {
	return r.p.version > st.Live.Version && (st.Next.IsZero() || r.p.version > st.Next.Version)
}

// laneFor returns the lane of build b: l if it is already, nil if there is
// none or this code cannot write it (another version's).
func (r *Runner) laneFor(l *lane, b Build, ours bool) *lane {
	if b.IsZero() || !ours {
		return nil
	}
	if l != nil && l.build.Number == b.Number {
		return l
	}
	return &lane{build: b, group: r.p.BuildGroup(b.Number), tables: TablesOf(r.p, b.Number), signals: true}
}

// transition makes the first build live, starts a build of this version
// when the live one is of another (abandoning a build of a third), and
// drops a retired build, in one transaction holding the state.
func (r *Runner) transition(ctx context.Context) (State, error) {
	tx, err := r.cfg.Store.Begin(ctx)
	if err != nil {
		return State{}, fmt.Errorf("projection %s: begin: %w", r.p.group, err)
	}
	defer func() { _ = tx.Rollback(context.WithoutCancel(ctx)) }()
	st, err := tx.State(ctx, r.p.Name())
	if err != nil {
		return State{}, fmt.Errorf("projection %s: state: %w", r.p.group, err)
	}
	st.Name = r.p.Name()
	switch {
	case st.Live.IsZero():
		st.Last++
		st.Live = r.newBuild(st.Last)
	case r.supersedes(st):
		if !st.Next.IsZero() {
			if err := r.dropBuild(ctx, tx, st.Next); err != nil {
				return State{}, err
			}
		}
		st.Last++
		st.Next = r.newBuild(st.Last)
		r.cfg.Logger.Info("projection: schema version changed: rebuilding", "projection", r.p.group.String(),
			"live", st.Live.Version, "version", r.p.version, "build", st.Next.Number)
	}
	if !st.Retired.IsZero() {
		if err := r.dropBuild(ctx, tx, st.Retired); err != nil {
			return State{}, err
		}
		st.Retired = Build{}
	}
	if err := tx.SaveState(ctx, st); err != nil {
		return State{}, fmt.Errorf("projection %s: save state: %w", r.p.group, err)
	}
	if err := tx.Commit(ctx); err != nil {
		return State{}, fmt.Errorf("projection %s: commit state: %w", r.p.group, err)
	}
	return st, nil
}

// dropBuild drops a build's tables and removes its checkpoint and marks
// in tx.
func (r *Runner) dropBuild(ctx context.Context, tx Txn, b Build) error {
	for _, t := range b.Tables {
		if !sqlIdent(t) {
			return factum.IllegalState(fmt.Sprintf("projection %s: build %d: table name %q is not an identifier", r.p.group, b.Number, t))
		}
		if _, err := tx.Exec(ctx, `DROP TABLE IF EXISTS `+t); err != nil {
			return fmt.Errorf("projection %s: drop build %d's table %s: %w", r.p.group, b.Number, t, err)
		}
	}
	g := r.p.BuildGroup(b.Number)
	if err := tx.DeleteCheckpoint(ctx, g); err != nil {
		return fmt.Errorf("projection %s: drop build %d: %w", r.p.group, b.Number, err)
	}
	if err := tx.DeleteMarks(ctx, g); err != nil {
		return fmt.Errorf("projection %s: drop build %d: %w", r.p.group, b.Number, err)
	}
	return nil
}

// trySwitch makes the next build live if it is as far along the log as
// the live one, in one transaction holding the state and both
// checkpoints; the old live build is retired (dropped next round).
func (r *Runner) trySwitch(ctx context.Context) (bool, error) {
	n := r.next
	tx, err := r.cfg.Store.Begin(ctx)
	if err != nil {
		return false, fmt.Errorf("projection %s: begin: %w", r.p.group, err)
	}
	defer func() { _ = tx.Rollback(context.WithoutCancel(ctx)) }()
	st, err := tx.State(ctx, r.p.Name())
	if err != nil {
		return false, fmt.Errorf("projection %s: state: %w", r.p.group, err)
	}
	if st.Next.Number != n.build.Number {
		return false, nil // someone else switched or abandoned it: sync again
	}
	npos, err := tx.Checkpoint(ctx, n.group)
	if err != nil {
		return false, fmt.Errorf("projection %s: checkpoint: %w", n.group, err)
	}
	if st.Live.Version == r.p.version {
		// The live build is kept up to date meanwhile: switch only to a
		// build at least as far along, so a reader never goes back.
		lpos, err := tx.Checkpoint(ctx, r.p.BuildGroup(st.Live.Number))
		if err != nil {
			return false, fmt.Errorf("projection %s: checkpoint: %w", r.p.group, err)
		}
		if npos.Less(lpos) {
			return false, nil
		}
	}
	st.Retired, st.Live, st.Next = st.Live, st.Next, Build{}
	if err := tx.SaveState(ctx, st); err != nil {
		return false, fmt.Errorf("projection %s: save state: %w", r.p.group, err)
	}
	if err := tx.Commit(ctx); err != nil {
		return false, fmt.Errorf("projection %s: switch: %w", r.p.group, err)
	}
	r.cfg.Logger.Info("projection: switched to the rebuilt build", "projection", r.p.group.String(),
		"build", st.Live.Number, "version", st.Live.Version, "retired", st.Retired.Number)
	n.signals = true
	n.saved(npos)
	r.live, r.next = n, nil
	return true, nil
}

// Rebuild starts a blue/green rebuild: a new build of the projection's
// tables beside the live one, filled from the log's start while the live
// build keeps serving queries and advancing; Run switches to it in one
// transaction once it is as far along the log, then drops the old build.
// A crash at any point leaves the old or the new build live, never a half
// filled one, and the next Run goes on with the rebuild. Rebuild returns
// once the build is recorded (Status shows its progress); with a rebuild
// of this version under way already it does nothing, and one of another
// version is abandoned for it (this is how a lower version, which never
// rebuilds by itself, is rolled back to). A projection without a Schema
// is refused (IllegalArgument): use ResetAndReplay.
func (r *Runner) Rebuild(ctx context.Context) error {
	if r.p.version == 0 {
		return factum.IllegalArgument(fmt.Sprintf("projection %s has no Schema, so no builds: use ResetAndReplay", r.p.group))
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := r.sync(ctx); err != nil {
		return err
	}
	tx, err := r.cfg.Store.Begin(ctx)
	if err != nil {
		return fmt.Errorf("projection %s: rebuild: %w", r.p.group, err)
	}
	defer func() { _ = tx.Rollback(context.WithoutCancel(ctx)) }()
	st, err := tx.State(ctx, r.p.Name())
	if err != nil {
		return fmt.Errorf("projection %s: rebuild: %w", r.p.group, err)
	}
	if st.Next.Version == r.p.version {
		return nil // under way already
	}
	if !st.Next.IsZero() {
		// A build of another version: this code cannot fill it, and the
		// operator asked for one of this version.
		if err := r.dropBuild(ctx, tx, st.Next); err != nil {
			return err
		}
	}
	st.Last++
	st.Next = r.newBuild(st.Last)
	if err := tx.SaveState(ctx, st); err != nil {
		return fmt.Errorf("projection %s: rebuild: %w", r.p.group, err)
	}
	if err := tx.Commit(ctx); err != nil {
		return fmt.Errorf("projection %s: rebuild: %w", r.p.group, err)
	}
	r.next = r.laneFor(nil, st.Next, true)
	r.next.signals = r.live == nil
	r.kick()
	return nil
}

// ResetAndReplay empties the live read model and removes its checkpoint
// in one transaction, so the projection starts again from the log's
// beginning: a running Run replays it, or the next one does. Readers see
// the model fill up again as it replays: it is for development (Rebuild
// hides the replay). With a Schema the live build's tables are dropped and
// set up again; without, the projection's Reset empties them (without a
// Reset it is refused with IllegalArgument).
func (r *Runner) ResetAndReplay(ctx context.Context) error {
	if r.p.version == 0 && r.p.reset == nil {
		return factum.IllegalArgument(fmt.Sprintf("projection %s has no Reset function", r.p.group))
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.p.version > 0 {
		if err := r.sync(ctx); err != nil {
			return err
		}
		if r.live == nil {
			return factum.IllegalState(fmt.Sprintf("projection %s: the live build is of another schema version: a rebuild to this one is under way", r.p.group))
		}
	}
	l := r.live
	if err := r.ensureSetup(ctx, l); err != nil {
		return err
	}
	tx, err := r.cfg.Store.Begin(ctx)
	if err != nil {
		return fmt.Errorf("projection %s: reset: %w", r.p.group, err)
	}
	defer func() { _ = tx.Rollback(context.WithoutCancel(ctx)) }()
	tx = tx.WithTables(l.tables)
	if r.p.version > 0 {
		st, err := tx.State(ctx, r.p.Name())
		if err != nil {
			return fmt.Errorf("projection %s: reset: %w", r.p.group, err)
		}
		if st.Live.Number != l.build.Number {
			return fmt.Errorf("projection %s: reset: %w", r.p.group, errGone)
		}
		if err := r.dropBuild(ctx, tx, st.Live); err != nil {
			return err
		}
		if err := r.setupIn(ctx, tx); err != nil {
			return fmt.Errorf("projection %s: setup: %w", r.p.group, err)
		}
	} else {
		if err := r.p.reset(ctx, tx); err != nil {
			return fmt.Errorf("projection %s: reset: %w", r.p.group, err)
		}
		if err := tx.DeleteCheckpoint(ctx, l.group); err != nil {
			return fmt.Errorf("projection %s: reset: %w", r.p.group, err)
		}
		if err := tx.DeleteMarks(ctx, l.group); err != nil {
			return fmt.Errorf("projection %s: reset: %w", r.p.group, err)
		}
	}
	if err := tx.Commit(ctx); err != nil {
		return fmt.Errorf("projection %s: reset: %w", r.p.group, err)
	}
	l.posKnown, l.failing, l.failures = false, "", 0
	r.kick()
	return nil
}
