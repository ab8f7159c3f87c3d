package projection

import (
	"context"
	"time"

	"github.com/factum-go/factum"
)

// DefaultCheckpointInterval is Config.CheckpointInterval's default.
const DefaultCheckpointInterval = 100 * time.Millisecond

// A batch holding no stream the projection consumes (other aggregates'
// streams, events it has no use for) needs no transaction: nothing of it
// is written. Committing one per such batch only to move the checkpoint
// cost a write transaction per read of a log the projection mostly does
// not want. The lane reads on from the batch's end instead and saves the
// checkpoint past it later (saveSkipped), in the next transaction it
// opens. The guarantee stays: the checkpoint only ever passes streams
// that are applied or hold nothing the projection consumes, and a crash
// before the save leaves it behind, so the streams are read again and
// still not applied.

// from returns where the lane reads its next batch from: past the
// streams it skipped, else its checkpoint.
func (l *lane) from() factum.Position {
	if l.skipped.IsZero() || !l.pos.Less(l.read) {
		return l.pos
	}
	return l.read
}

// skip records that the streams up to end hold nothing the projection
// consumes.
func (l *lane) skip(end factum.Position) {
	if l.skipped.IsZero() {
		l.skipped = time.Now()
	}
	l.read = end
}

// saved records that the lane's checkpoint is at pos as committed. The
// skipped streams stay skipped only when pos is the checkpoint they
// follow; a checkpoint that moved (another runner, a reset) or passed
// them is read on from.
func (l *lane) saved(pos factum.Position) {
	if pos != l.pos || !pos.Less(l.read) {
		l.skipped = time.Time{}
	}
	l.pos, l.posKnown = pos, true
}

// wantsAny reports whether the batch holds a stream the projection
// consumes.
func (p *Projection) wantsAny(batch []factum.EventStream) bool {
	for i := range batch {
		if p.wants(&batch[i]) {
			return true
		}
	}
	return false
}

// saveSkipped saves the lane's checkpoint past the streams it skipped when
// that is due: the interval has passed since the first of them, or the
// lane reached the log's end (atEnd) while the runner drains or while it
// fills a rebuild's build (whose switch compares saved checkpoints). It
// takes a transaction of its own, at the checkpoint the skipped streams
// follow (errMoved if it moved).
func (r *Runner) saveSkipped(ctx context.Context, l *lane, atEnd bool) error {
	if l.skipped.IsZero() {
		return nil
	}
	due := r.cfg.CheckpointInterval < 0 || time.Since(l.skipped) >= r.cfg.CheckpointInterval ||
		atEnd && (l == r.next || r.drain.Err() != nil)
	if !due {
		return nil
	}
	tx, err := r.at(ctx, l, l.pos)
	if err != nil {
		return err
	}
	return r.commit(ctx, l, tx, l.read)
}

// waitFor returns how long Run waits for appends at the log's end: the
// poll interval, or less when a lane's skipped streams are due to be
// saved sooner.
func (r *Runner) waitFor() time.Duration {
	r.mu.Lock()
	defer r.mu.Unlock()
	d := r.cfg.PollInterval
	for _, l := range []*lane{r.live, r.next} {
		if l == nil || l.skipped.IsZero() {
			continue
		}
		d = min(d, max(time.Until(l.skipped.Add(r.cfg.CheckpointInterval)), time.Millisecond))
	}
	return d
}
