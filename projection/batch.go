package projection

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"time"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/event"
	"github.com/factum-go/factum/eventstore"
)

// step projects one batch into l: it returns how many streams it moved
// past and where it reads on from (the checkpoint after them, unless it
// skipped streams without saving: see saveSkipped).
func (r *Runner) step(ctx context.Context, l *lane) (int, factum.Position, error) {
	if err := r.ensureSetup(ctx, l); err != nil {
		return 0, factum.Position{}, err
	}
	if l == r.next && r.live != nil && !r.live.posKnown {
		l.caught = false // wait for the live lane to know where it is (see begin)
		return 0, l.from(), nil
	}
	pos, batch, err := r.begin(ctx, l)
	if err != nil {
		l.caught = false
		return 0, pos, err
	}
	if len(batch) == 0 {
		if err := r.saveSkipped(ctx, l, true); err != nil {
			l.caught = false
			return 0, pos, err
		}
		l.caught = true
		return 0, l.from(), nil
	}
	l.caught = false
	if !r.p.wantsAny(batch) {
		end := batch[len(batch)-1].Position
		l.skip(end)
		if err := r.saveSkipped(ctx, l, false); err != nil {
			return 0, pos, err
		}
		return len(batch), end, nil
	}
	tx, err := r.at(ctx, l, pos)
	if err != nil {
		return 0, pos, err
	}
	failed, ferr, err := r.applyCommit(ctx, l, tx, batch)
	if err != nil {
		return 0, pos, err
	}
	if ferr == nil {
		r.signalAll(l, batch, nil)
		l.failing, l.failures = "", 0
		return len(batch), batch[len(batch)-1].Position, nil
	}
	if ctx.Err() != nil {
		return 0, pos, ctx.Err()
	}
	s := &batch[failed]
	if l.failing != s.ID {
		l.failing, l.failures = s.ID, 0
	}
	l.failures++
	if failed > 0 {
		// The streams before the failing one commit on their own, so a
		// failing stream holds up only itself and what follows it.
		if err := r.commitPrefix(ctx, l, pos, batch[:failed]); err != nil {
			return 0, pos, err
		}
		return failed, batch[failed-1].Position, nil
	}
	if l.failures < r.cfg.Attempts || r.cfg.Failures == nil {
		return 0, pos, fmt.Errorf("projection %s: stream %s: %w", l.group, s.ID, ferr)
	}
	return r.pass(ctx, l, pos, s, ferr)
}

// ensureSetup creates the lane's tables in a transaction of its own, once
// per lane, under the lock of the projection's state, and checks that each
// declared table has a tenant column.
func (r *Runner) ensureSetup(ctx context.Context, l *lane) error {
	if l.setupDone {
		return nil
	}
	if r.p.setup == nil && r.p.version == 0 {
		l.setupDone = true
		return nil
	}
	tx, err := r.cfg.Store.Begin(ctx)
	if err != nil {
		return fmt.Errorf("projection %s: begin: %w", l.group, err)
	}
	defer func() { _ = tx.Rollback(context.WithoutCancel(ctx)) }()
	// The projection's state first, held to the commit: the set-ups of
	// runners starting together (a cluster's instances on a fresh
	// database) run one after another, since PostgreSQL's CREATE … IF NOT
	// EXISTS fails when another transaction creates the same table at the
	// same moment. Every runner transaction takes the state before
	// anything else (see at).
	if _, err := tx.State(ctx, r.p.Name()); err != nil {
		return fmt.Errorf("projection %s: setup: %w", l.group, err)
	}
	if err := r.setupIn(ctx, tx.WithTables(l.tables)); err != nil {
		return fmt.Errorf("projection %s: setup: %w", l.group, err)
	}
	if err := tx.Commit(ctx); err != nil {
		return fmt.Errorf("projection %s: setup: %w", l.group, err)
	}
	l.setupDone = true
	return nil
}

// setupIn runs Setup in tx and, with a Schema, checks the tables.
func (r *Runner) setupIn(ctx context.Context, tx Txn) (err error) {
	defer func() {
		if v := recover(); v != nil {
			err = factum.Errorf(factum.CodeInternalServerError, "projection %s: setup panicked: %v", r.p.group, v)
		}
	}()
	if r.p.setup != nil {
		if err := r.p.setup(ctx, tx); err != nil {
			return err
		}
	}
	for _, t := range r.p.tables {
		if r.p.version == 0 {
			break
		}
		var n int64
		err := tx.QueryRow(ctx, `SELECT count(tenant) FROM `+tx.Table(t)+` WHERE 1 = 0`).Scan(&n)
		if err != nil {
			return factum.IllegalArgument(fmt.Sprintf("projection %s: table %s (%s) after Setup: it must exist and have a column tenant: %v", r.p.group, t, tx.Table(t), err))
		}
	}
	return nil
}

// begin reads the next batch after the checkpoint (after the streams the
// lane skipped, if any) and returns it with the checkpoint it follows. No
// transaction is open while the log is read: a runner never holds a
// pooled connection while it waits for another. The caller starts one,
// holding the checkpoint at that position (at), only for a batch holding
// a stream the projection consumes.
func (r *Runner) begin(ctx context.Context, l *lane) (factum.Position, []factum.EventStream, error) {
	if !l.posKnown {
		tx, err := r.cfg.Store.Begin(ctx)
		if err != nil {
			return factum.Position{}, nil, fmt.Errorf("projection %s: begin: %w", l.group, err)
		}
		pos, err := tx.Checkpoint(ctx, l.group)
		_ = tx.Rollback(context.WithoutCancel(ctx))
		if err != nil {
			return factum.Position{}, nil, fmt.Errorf("projection %s: checkpoint: %w", l.group, err)
		}
		l.skipped = time.Time{}
		l.pos, l.posKnown = pos, true
	}
	pos := l.pos
	// A runner reads on from its checkpoint, so it may share a read of
	// the log's end with the other readers (see eventstore.Following),
	// except once draining: a drain ends on a round that moved nothing,
	// whose reads must show every stream appended before it.
	readCtx := ctx
	if r.drain.Err() == nil {
		readCtx = eventstore.Following(ctx)
	}
	batch, err := r.cfg.Log.ReadLog(readCtx, l.from(), r.cfg.BatchSize)
	if err != nil {
		return pos, nil, fmt.Errorf("projection %s: read log: %w", l.group, err)
	}
	if l == r.next && r.live != nil && r.live.posKnown {
		// A build beside a live one goes no further than the live
		// build: the live runner signals PROJECTED for the streams up
		// to the switch (which finds the two at one position), the new
		// live one for those after it, so no stream goes unsignalled.
		end := r.live.pos
		i := len(batch)
		for i > 0 && end.Less(batch[i-1].Position) {
			i--
		}
		batch = batch[:i]
	}
	return pos, batch, nil
}

// errMoved reports that the checkpoint is not where this runner read the
// log from: the batch is read again from where it is.
var errMoved = errors.New("projection: the checkpoint moved")

// errGone reports that the lane's build is no longer the one it stands
// for (another runner switched or dropped it): the runner reads the
// builds' state again.
var errGone = errors.New("projection: the build is no longer current")

// at starts a transaction scoped to the lane's tables and checks, under
// the store's lock of the checkpoint, that it is at pos, and (with a
// Schema) that the lane's build is still the live or the next one.
func (r *Runner) at(ctx context.Context, l *lane, pos factum.Position) (Txn, error) {
	tx, err := r.cfg.Store.Begin(ctx)
	if err != nil {
		return nil, fmt.Errorf("projection %s: begin: %w", l.group, err)
	}
	tx = tx.WithTables(l.tables)
	// The state first, then the checkpoint: every transaction of the
	// runners takes the two in this order, so two instances never wait
	// for each other's.
	if r.p.version > 0 {
		st, err := tx.State(ctx, r.p.Name())
		if err != nil {
			_ = tx.Rollback(context.WithoutCancel(ctx))
			return nil, fmt.Errorf("projection %s: state: %w", l.group, err)
		}
		if st.Live.Number != l.build.Number && st.Next.Number != l.build.Number {
			_ = tx.Rollback(context.WithoutCancel(ctx))
			return nil, fmt.Errorf("projection %s: build %d: %w", r.p.group, l.build.Number, errGone)
		}
	}
	got, err := tx.Checkpoint(ctx, l.group)
	if err != nil {
		_ = tx.Rollback(context.WithoutCancel(ctx))
		return nil, fmt.Errorf("projection %s: checkpoint: %w", l.group, err)
	}
	if got != pos {
		_ = tx.Rollback(context.WithoutCancel(ctx))
		l.saved(got)
		return nil, errMoved
	}
	return tx, nil
}

// applyCommit runs the function for every stream of the batch it
// consumes, then saves the checkpoint at the batch's end and commits tx.
// A stream's failure (its function's error, or at the commit a statement
// it queued) rolls tx back and is ferr, with the failing stream's index;
// err is a failure of the transaction itself.
func (r *Runner) applyCommit(ctx context.Context, l *lane, tx Txn, batch []factum.EventStream) (failed int, ferr, err error) {
	defer func() { _ = tx.Rollback(context.WithoutCancel(ctx)) }()
	applied := make([]queuedFrom, 0, len(batch))
	// fctx is ctx carrying the tenant of the streams in hand, made again
	// only when the tenant changes: invoke then finds it there rather
	// than making a context per stream.
	var fctx context.Context
	var tenant string
	for i := range batch {
		if !r.p.wants(&batch[i]) {
			continue
		}
		if t := batch[i].AggregateID.TenantOrDefault(); fctx == nil || t != tenant {
			fctx, tenant = factum.ContextWithTenant(ctx, t), t
		}
		applied = append(applied, queuedFrom{stream: i, queued: tx.Queued()})
		if err := r.invoke(fctx, tx, &batch[i]); err != nil {
			var qe *QueuedError
			if !errors.As(err, &qe) {
				// The function may have dropped or reworded a queued
				// statement's error: the transaction still holds it. The
				// queue is not run here (the function's own failure may
				// have aborted the transaction).
				if ferr := tx.Failed(); errors.As(ferr, &qe) {
					err = qe
				}
			}
			return owner(err, applied, i), err, nil
		}
	}
	if err := r.commit(ctx, l, tx, batch[len(batch)-1].Position); err != nil {
		var qe *QueuedError
		if errors.As(err, &qe) && len(applied) > 0 {
			return owner(qe, applied, applied[len(applied)-1].stream), qe, nil
		}
		return 0, nil, err
	}
	return 0, nil, nil
}

// invoke calls the function with s's tenant in its context
// (factum.ContextWithTenant), as every event function runs, turning a
// panic into an InternalServerError.
func (r *Runner) invoke(ctx context.Context, tx Tx, s *factum.EventStream) (err error) {
	defer func() {
		if v := recover(); v != nil {
			err = factum.Errorf(factum.CodeInternalServerError, "projection %s panicked: %v\n%s", r.p.group, v, debug.Stack())
		}
	}()
	return r.project(factum.ContextWithTenant(ctx, s.AggregateID.TenantOrDefault()), tx, s)
}

// commit saves the checkpoint at pos in tx and commits it.
func (r *Runner) commit(ctx context.Context, l *lane, tx Txn, pos factum.Position) error {
	defer func() { _ = tx.Rollback(context.WithoutCancel(ctx)) }()
	if err := tx.SaveCheckpoint(ctx, l.group, pos); err != nil {
		return fmt.Errorf("projection %s: save checkpoint: %w", l.group, err)
	}
	if err := tx.Commit(ctx); err != nil {
		l.posKnown = false
		return fmt.Errorf("projection %s: commit: %w", l.group, err)
	}
	l.saved(pos)
	return nil
}

// commitPrefix projects streams, which follow from and which the function
// handled without failing a moment ago, in a transaction of their own and
// commits it.
func (r *Runner) commitPrefix(ctx context.Context, l *lane, from factum.Position, streams []factum.EventStream) error {
	tx, err := r.at(ctx, l, from)
	if err != nil {
		return err
	}
	failed, ferr, err := r.applyCommit(ctx, l, tx, streams)
	if err != nil {
		return err
	}
	if ferr != nil {
		return fmt.Errorf("projection %s: stream %s: %w", l.group, streams[failed].ID, ferr)
	}
	r.signalAll(l, streams, nil)
	return nil
}

// pass records the failure of a stream the function keeps failing on, the
// first after from, then moves the checkpoint past it in a transaction
// without its writes, which marks the stream as failed in the lane's build
// (so a retry applies it there once).
func (r *Runner) pass(ctx context.Context, l *lane, from factum.Position, s *factum.EventStream, ferr error) (int, factum.Position, error) {
	f := event.Failure{
		Function: r.p.Function(), Stage: factum.StageProjected, Stream: *s, EventID: r.failedEvent(s, ferr),
		Err: ferr, Attempts: l.failures, Time: r.cfg.Now(),
	}
	if err := r.cfg.Failures.RecordFailure(ctx, f); err != nil {
		return 0, factum.Position{}, fmt.Errorf("projection %s: record the failure of stream %s: %w", l.group, s.ID, err)
	}
	tx, err := r.at(ctx, l, from)
	if err != nil {
		return 0, factum.Position{}, err
	}
	if err := tx.MarkFailed(ctx, l.group, s.ID); err != nil {
		_ = tx.Rollback(context.WithoutCancel(ctx))
		return 0, factum.Position{}, fmt.Errorf("projection %s: mark stream %s failed: %w", l.group, s.ID, err)
	}
	if err := r.commit(ctx, l, tx, s.Position); err != nil {
		return 0, factum.Position{}, err
	}
	if l.signals {
		r.signal(s, ferr)
	}
	l.failing, l.failures = "", 0
	return 1, s.Position, nil
}

// failedEvent returns the event of s a failure is charged to: the one
// ferr names (an *event.EventError, as the event consumer reads it) when it
// is an event of s, else the first the projection consumes. An ID that is
// not s's is taken for a mistake of the function's: the failure of s
// charged to it would be recorded against another event's execution, or
// (an ID that is no event's) refused, and the runner never moves past a
// stream whose failure is not recorded.
func (r *Runner) failedEvent(s *factum.EventStream, ferr error) string {
	if ee, ok := errors.AsType[*event.EventError](ferr); ok && ee.EventID != "" {
		for i := range s.Events {
			if s.Events[i].ID == ee.EventID {
				return ee.EventID
			}
		}
	}
	for i := range s.Events {
		if r.p.Consumes(s.AggregateID.NamedAggregate, s.Events[i].Name) {
			return s.Events[i].ID
		}
	}
	return ""
}

func (r *Runner) signalAll(l *lane, batch []factum.EventStream, err error) {
	if !l.signals {
		return
	}
	for i := range batch {
		if r.p.wants(&batch[i]) {
			r.signal(&batch[i], err)
		}
	}
}

func (r *Runner) signal(s *factum.EventStream, err error) {
	if r.cfg.Notify == nil {
		return
	}
	sig := factum.Signal{
		CommandID: s.CommandID, RequestID: s.RequestID, Stage: factum.StageProjected, Function: r.p.Function(),
		AggregateID: s.AggregateID, AggregateVersion: s.Version, Code: factum.CodeOk, SignalTime: r.cfg.Now(),
		Origin: s.Header[factum.OriginHeader], OriginWait: factum.OriginWait(s.Header),
	}
	if err != nil {
		fe := factum.AsError(err)
		sig.Code, sig.Message, sig.Bindings = fe.Code, factum.MessageOf(err), fe.Bindings
	}
	r.cfg.Notify(sig)
}
