package sqlite

import (
	"context"
	"fmt"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/query"
	"github.com/factum-go/factum/query/sqlquery"
	"github.com/factum-go/factum/snapshot"
)

// snapshotQueryColumns are snapshotColumns as sqlquery selects them.
var snapshotQueryColumns = sqlquery.SnapshotColumns()

// scope restricts a statement to one aggregate type.
func (s *SnapshotStore) scope(named factum.NamedAggregate) sqlquery.Statement {
	return sqlquery.Statement{SQL: s.tr.Alias() + ".aggregate = ?", Args: []any{named.Aggregate}}
}

func (s *SnapshotStore) checkQuery(ctx context.Context, named factum.NamedAggregate) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := named.Validate(); err != nil {
		return err
	}
	return s.checkContext(named)
}

// Find implements snapshot.Querier.
func (s *SnapshotStore) Find(ctx context.Context, named factum.NamedAggregate, plan query.Plan) ([]snapshot.Snapshot, error) {
	if err := s.checkQuery(ctx, named); err != nil {
		return nil, err
	}
	st, err := s.findStatement(named, plan)
	if err != nil {
		return nil, err
	}
	rows, err := s.db.Reader().QueryContext(ctx, st.SQL, st.Args...)
	if err != nil {
		return nil, fmt.Errorf("sqlite: find snapshots of %s: %w", named, err)
	}
	defer rows.Close()
	out := make([]snapshot.Snapshot, 0, min(plan.Limit, 64))
	for rows.Next() {
		snap, err := scanSnapshot(named, rows)
		if err != nil {
			return nil, fmt.Errorf("sqlite: find snapshots of %s: %w", named, err)
		}
		out = append(out, snap)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlite: find snapshots of %s: %w", named, err)
	}
	return out, nil
}

// findStatement is the SELECT Find runs.
func (s *SnapshotStore) findStatement(named factum.NamedAggregate, plan query.Plan) (sqlquery.Statement, error) {
	return s.tr.Find(plan, s.table, snapshotQueryColumns, s.scope(named))
}

// Count implements snapshot.Querier.
func (s *SnapshotStore) Count(ctx context.Context, named factum.NamedAggregate, cond query.Condition) (int64, error) {
	if err := s.checkQuery(ctx, named); err != nil {
		return 0, err
	}
	st, err := s.tr.Count(cond, s.table, s.scope(named))
	if err != nil {
		return 0, err
	}
	var n int64
	if err := s.db.Reader().QueryRowContext(ctx, st.SQL, st.Args...).Scan(&n); err != nil {
		return 0, fmt.Errorf("sqlite: count snapshots of %s: %w", named, err)
	}
	return n, nil
}
