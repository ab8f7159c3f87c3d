package postgres

import (
	"context"

	"github.com/factum-go/factum/internal/sqlstore"
	"github.com/factum-go/factum/projection"
	"github.com/jackc/pgx/v5"
)

// ProjectionStore is the read-model database of projections in a
// PostgreSQL database: their checkpoints live in the context's checkpoint
// table (the one NewCheckpointStore uses), written in the same transaction
// as the read model, as are the projections' build state
// (factum_<context>_projections) and failure marks
// (factum_<context>_projection_marks). Begin starts a READ COMMITTED
// transaction from the pool; its Checkpoint and State lock their rows
// (made first if there are none) until the transaction ends, so runners
// of one projection take turns: the second reads what the first
// committed. Queries and State read from the pool outside a transaction.
type ProjectionStore = sqlstore.Projections

// NewProjectionStore returns the projection store of boundedContext in db,
// applying the checkpoint and projection tables' migrations if they are
// not applied yet.
func NewProjectionStore(ctx context.Context, db *DB, boundedContext string) (*ProjectionStore, error) {
	return sqlstore.OpenProjections(ctx, &dialect, db.migrator(), migrations, boundedContext, db.projections())
}

// PgxTx returns the pgx.Tx behind a projection's transaction on
// PostgreSQL, for pgx's API beyond Exec, QueryRow and Queue (CopyFrom).
// Statements queued with Queue and not run yet run at the transaction's
// next Exec, QueryRow or commit, after what is done directly on the
// pgx.Tx meanwhile.
func PgxTx(tx projection.Tx) (pgx.Tx, bool) { return sqlstore.Raw[pgx.Tx](tx) }
