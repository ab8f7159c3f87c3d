package sqlite

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/eventstore"
	"github.com/factum-go/factum/internal/sqlstore"
)

// esGroups writes the store's group appends: the part of its backend that
// makes a group atomic.
type esGroups EventStore

// AppendGroup implements sqlstore.GroupAppends. The group is one write
// of the DB's batcher, so it shares a transaction, and its one commit,
// with the appends and other writes queued beside it; inside that
// transaction it is a SAVEPOINT, its streams inserted one after another
// by the append's statement (each version's predecessor is the one
// inserted just before it). A row that does not go in is classified there,
// under the write lock that refused it, as a single append's is; then the
// group rolls back to its savepoint, leaving the other writes of the
// transaction as they are. Positions follow the order of the inserts, so
// the group's streams enter the log together, in version order.
//
// An error of a statement (not a refusal) fails the group's write, and
// the batcher writes the others of its transaction again without it. The
// outcome is always definite: a group whose ctx ends while it waits for
// the batcher is never written, and once its transaction has begun the
// call waits for it to end.
func (g *esGroups) AppendGroup(ctx context.Context, ss []*factum.EventStream, rows []sqlstore.EventRow) (eventstore.Outcome, int, error) {
	s := (*EventStore)(g)
	pos := make([]factum.Position, len(rows))
	var (
		outcome eventstore.Outcome
		refused int
	)
	err := s.db.batch.do(&batchWrite{ctx: ctx, apply: func(ctx context.Context, tx *sql.Tx) error {
		// Run again, alone, when another write of the batch failed: the
		// outcome is that of this run.
		outcome, refused = eventstore.Appended, -1
		if _, err := tx.ExecContext(ctx, `SAVEPOINT factum_group`); err != nil {
			return fmt.Errorf("savepoint: %w", err)
		}
		insert, classify := tx.StmtContext(ctx, s.insert), tx.StmtContext(ctx, s.classify)
		for i := range rows {
			p, ok, err := esInsert(ctx, insert, &rows[i])
			if err != nil {
				return err
			}
			if ok {
				pos[i] = p
				continue
			}
			o, err := s.classifyRow(ctx, classify, &rows[i])
			if err != nil {
				return err
			}
			outcome, refused = o, i
			if _, err := tx.ExecContext(ctx, `ROLLBACK TO factum_group`); err != nil {
				return fmt.Errorf("roll back to the savepoint: %w", err)
			}
			break
		}
		if _, err := tx.ExecContext(ctx, `RELEASE factum_group`); err != nil {
			return fmt.Errorf("release the savepoint: %w", err)
		}
		return nil
	}})
	if err != nil {
		return eventstore.Failed, 0, fmt.Errorf("sqlite: append a group of %s versions %d to %d: %w",
			ss[0].AggregateID, ss[0].Version, ss[len(ss)-1].Version, err)
	}
	s.stats.Batches.Add(1)
	if outcome != eventstore.Appended {
		return outcome, refused, nil
	}
	for i, es := range ss {
		es.Position = pos[i]
	}
	s.stats.Streams.Add(int64(len(ss)))
	esStoreMax(&s.lastSeq, pos[len(pos)-1].Seq)
	return eventstore.Appended, -1, nil
}
