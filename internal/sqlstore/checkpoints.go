package sqlstore

import (
	"context"
	"fmt"
	"io/fs"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/event"
)

// Checkpoints is the event.CheckpointStore of the consumer groups of one
// bounded context over its checkpoint table: one row per group keyed by
// (context, processor, name), saved by one upsert whose row-value
// comparison keeps a position from moving backwards whatever the order
// concurrent saves reach it in.
type Checkpoints struct {
	d     *Dialect
	table string
	read  Executor
	write WriteFunc

	// Upsert, Load and Delete are the statements on the table; Upsert is
	// exported for a backend that prepares it.
	Upsert, Load, Delete string
}

var _ event.CheckpointStore = (*Checkpoints)(nil)

// NewCheckpoints returns the checkpoints of the consumers of
// boundedContext's log in db, read through read and saved through write
// (nil: through read, as they come),
// applying the schema migrations from fsys (component
// "checkpoint:<context>": the tables factum_<context>_checkpoints and
// factum_<context>_leases) if they are not applied yet.
func NewCheckpoints(ctx context.Context, d *Dialect, db Migrator, fsys fs.FS, boundedContext string, read Executor, write WriteFunc) (*Checkpoints, error) {
	table, err := Setup(ctx, d, db, Component{Name: "checkpoint", FS: fsys, Table: "checkpoints"}, boundedContext)
	if err != nil {
		return nil, err
	}
	return newCheckpoints(d, table, read, write), nil
}

func newCheckpoints(d *Dialect, table string, read Executor, write WriteFunc) *Checkpoints {
	p := d.Param
	key := ` WHERE context = ` + p(1) + ` AND processor = ` + p(2) + ` AND name = ` + p(3)
	upsert := `INSERT INTO ` + table + ` (context, processor, name, tx, seq) VALUES (` + d.params(1, 5) + `)
		ON CONFLICT (context, processor, name) DO UPDATE SET tx = excluded.tx, seq = excluded.seq, updated_at = now()
		WHERE (` + table + `.tx, ` + table + `.seq) < (excluded.tx, excluded.seq)`
	if d.Stamp != nil {
		upsert = `INSERT INTO ` + table + ` (context, processor, name, tx, seq, updated_at) VALUES (` + d.params(1, 6) + `)
		ON CONFLICT (context, processor, name) DO UPDATE SET tx = excluded.tx, seq = excluded.seq, updated_at = excluded.updated_at
		WHERE (` + table + `.tx, ` + table + `.seq) < (excluded.tx, excluded.seq)`
	}
	return &Checkpoints{d: d, table: table, read: read, write: write,
		Upsert: upsert,
		Load:   `SELECT tx, seq FROM ` + table + key,
		Delete: `DELETE FROM ` + table + key,
	}
}

// Table returns the quoted checkpoint table.
func (s *Checkpoints) Table() string { return s.table }

// Checkpoint implements event.CheckpointStore: the group's saved position,
// or the zero Position when none was saved.
func (s *Checkpoints) Checkpoint(ctx context.Context, group factum.Function) (factum.Position, error) {
	if err := event.ValidateGroup(group); err != nil {
		return factum.Position{}, err
	}
	return s.load(ctx, s.read, s.Load, group)
}

// load reads a group's position with query.
func (s *Checkpoints) load(ctx context.Context, ex Executor, query string, group factum.Function) (factum.Position, error) {
	var tx, seq int64
	err := ex.QueryRow(ctx, query, group.Context, group.Processor, group.Name).Scan(&tx, &seq)
	switch {
	case s.d.NoRows(err):
		return factum.Position{}, nil
	case err != nil:
		return factum.Position{}, fmt.Errorf("%s: checkpoint of %s: %w", s.d.Name, group, err)
	}
	return factum.Position{Tx: uint64(tx), Seq: uint64(seq)}, nil
}

// SaveCheckpoint implements event.CheckpointStore: it records pos unless
// the group's saved position is at or after it.
func (s *Checkpoints) SaveCheckpoint(ctx context.Context, group factum.Function, pos factum.Position) error {
	if err := event.ValidateGroup(group); err != nil {
		return err
	}
	if err := event.ValidatePosition(pos); err != nil {
		return err
	}
	args := s.UpsertArgs(group, pos)
	var err error
	if s.write == nil {
		_, err = s.read.Exec(ctx, s.Upsert, args...)
	} else {
		err = s.write(ctx, func(ctx context.Context, ex Executor) error {
			_, err := ex.Exec(ctx, s.Upsert, args...)
			return err
		})
	}
	if err != nil {
		return fmt.Errorf("%s: save checkpoint of %s at %s: %w", s.d.Name, group, pos, err)
	}
	return nil
}

// UpsertArgs are the arguments of Upsert for group at pos.
func (s *Checkpoints) UpsertArgs(group factum.Function, pos factum.Position) []any {
	args := []any{group.Context, group.Processor, group.Name, int64(pos.Tx), int64(pos.Seq)}
	if s.d.Stamp != nil {
		args = append(args, s.d.Stamp().UnixMilli())
	}
	return args
}
