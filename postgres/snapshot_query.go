package postgres

import (
	"context"
	"fmt"
	"strings"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/query"
	"github.com/factum-go/factum/query/sqlquery"
	"github.com/factum-go/factum/snapshot"
)

// snapshotTableToken stands for the table in the statements sqlquery
// writes: it takes plain identifiers only, and a context name may hold '-',
// '.' or capitals (which PostgreSQL folds unless quoted), so the quoted
// name replaces the token afterwards (see from).
const snapshotTableToken = "factum_snapshot_table"

// snapshotQueryColumns are snapshotColumns as sqlquery selects them.
var snapshotQueryColumns = []string{"aggregate_id", "tenant_id", "owner_id", "version", "event_id", "first_operator",
	"operator", "first_event_time", "event_time", "snapshot_time", "deleted", "state"}

// from puts the quoted table name in place of the token in the one FROM
// clause sqlquery writes: the statement's head is "SELECT <columns> FROM
// <table> AS <alias>", and nothing before it can hold the token.
func (s *SnapshotStore) from(st sqlquery.Statement) (sqlquery.Statement, error) {
	token := " FROM " + snapshotTableToken + " AS "
	i := strings.Index(st.SQL, token)
	if i < 0 {
		return st, factum.Errorf(factum.CodeInternalServerError, "postgres: snapshot query without its FROM clause: %s", st.SQL)
	}
	st.SQL = st.SQL[:i] + " FROM " + s.table + " AS " + st.SQL[i+len(token):]
	return st, nil
}

// scope restricts a statement to one aggregate type.
func (s *SnapshotStore) scope(named factum.NamedAggregate) sqlquery.Statement {
	return sqlquery.Statement{SQL: s.tr.Alias() + ".aggregate = $1", Args: []any{named.Aggregate}}
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
	rows, err := s.db.Pool().Query(ctx, st.SQL, st.Args...)
	if err != nil {
		return nil, fmt.Errorf("postgres: find snapshots of %s: %w", named, err)
	}
	defer rows.Close()
	out := make([]snapshot.Snapshot, 0, min(plan.Limit, 64))
	for rows.Next() {
		snap, err := scanSnapshot(named, rows)
		if err != nil {
			return nil, fmt.Errorf("postgres: find snapshots of %s: %w", named, err)
		}
		out = append(out, snap)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("postgres: find snapshots of %s: %w", named, err)
	}
	return out, nil
}

// findStatement is the SELECT Find runs.
func (s *SnapshotStore) findStatement(named factum.NamedAggregate, plan query.Plan) (sqlquery.Statement, error) {
	st, err := s.tr.Find(plan, snapshotTableToken, snapshotQueryColumns, s.scope(named))
	if err != nil {
		return st, err
	}
	return s.from(st)
}

// Count implements snapshot.Querier.
func (s *SnapshotStore) Count(ctx context.Context, named factum.NamedAggregate, cond query.Condition) (int64, error) {
	if err := s.checkQuery(ctx, named); err != nil {
		return 0, err
	}
	st, err := s.tr.Count(cond, snapshotTableToken, s.scope(named))
	if err != nil {
		return 0, err
	}
	if st, err = s.from(st); err != nil {
		return 0, err
	}
	var n int64
	if err := s.db.Pool().QueryRow(ctx, st.SQL, st.Args...).Scan(&n); err != nil {
		return 0, fmt.Errorf("postgres: count snapshots of %s: %w", named, err)
	}
	return n, nil
}
