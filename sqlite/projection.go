package sqlite

import (
	"context"
	"database/sql"

	"github.com/factum-go/factum/internal/sqlstore"
	"github.com/factum-go/factum/projection"
)

// ProjectionStore is the read-model database of projections in a SQLite
// database: their transactions run on the database's one write
// connection, and their checkpoints live in the context's checkpoint table
// (the one NewCheckpointStore uses), written in the same transaction as
// the read model, as are the projections' build state
// (factum_<context>_projections) and failure marks
// (factum_<context>_projection_marks). A projection's transaction holds
// the write connection for its whole batch, so appends to the same
// database wait for it: keep batches short. Begin starts an immediate
// transaction on the write connection; queries and State read through the
// database's readers.
type ProjectionStore = sqlstore.Projections

// NewProjectionStore returns the projection store of boundedContext in db,
// applying the checkpoint and projection tables' migrations if they are
// not applied yet.
func NewProjectionStore(ctx context.Context, db *DB, boundedContext string) (*ProjectionStore, error) {
	return sqlstore.OpenProjections(ctx, &dialect, db.migrator(), migrations, boundedContext, db.projections())
}

// SQLTx returns the *sql.Tx behind a projection's transaction on SQLite,
// for the database/sql API beyond Exec, QueryRow and Queue. Statements
// queued with Queue and not run yet run at the transaction's next Exec,
// QueryRow or commit, after what is done directly on the *sql.Tx
// meanwhile.
func SQLTx(tx projection.Tx) (*sql.Tx, bool) { return sqlstore.Raw[*sql.Tx](tx) }
