package postgres

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/eventstore"
	"github.com/factum-go/factum/internal/sqlstore"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// esInsertSQL is the append statement for n rows. Its WHERE carries the
// predecessor rule: version 1, or version - 1 exists in the same tenant;
// the unique indexes refuse a taken version or request ID. A row the WHERE
// filters out does not come back from RETURNING and is classified
// afterwards.
//
// The plain statement fails as a whole on a unique violation. Conflicts are
// the exception, and ON CONFLICT costs every row a speculative insertion
// (index pre-checks and an extra WAL record), so the store runs the plain
// statement first and, only when a batch of several rows hits a unique
// violation, again with onConflict set: ON CONFLICT DO NOTHING then skips
// the refused rows and inserts the others.
//
// The predecessor is looked up by a LATERAL subquery with LIMIT 1, which the
// planner can only run as one probe of the version index per row. The
// obvious EXISTS under the OR lets it choose a "hashed SubPlan" instead: a
// scan of the whole table per statement, which it prefers whenever the
// plan is made while the table is small, and a cached plan then keeps
// doing as the table grows (TestEventStorePlansProbeTheIndex).
//
// The rows are a VALUES list of parameters, one statement per batch size
// (see esBatchSizes), rather than unnest over arrays, so that each
// statement has an exact row count to plan with. Rows are inserted in list
// order, sorted by aggregate: concurrent statements take index locks in the
// same order and cannot deadlock each other.
func esInsertSQL(table string, onConflict bool, n int) string {
	var b strings.Builder
	b.WriteString(`INSERT INTO ` + table + ` (aggregate, aggregate_id, tenant, version, stream_id, command_id, request_id, owner_id, header, create_time, events)
SELECT r.aggregate, r.aggregate_id, r.tenant, r.version, r.stream_id, r.command_id, r.request_id, r.owner_id,
	NULLIF(r.header, '')::json, r.create_time, r.events::json
FROM (VALUES `)
	for i := range n {
		if i > 0 {
			b.WriteString(", ")
		}
		p := i*esArgsPerRow + 1
		fmt.Fprintf(&b, "($%d::text, $%d::text, $%d::text, $%d::int4, $%d::text, $%d::text, $%d::text, $%d::text, $%d::text, $%d::timestamptz, $%d::text)",
			p, p+1, p+2, p+3, p+4, p+5, p+6, p+7, p+8, p+9, p+10)
	}
	b.WriteString(`)
	AS r(aggregate, aggregate_id, tenant, version, stream_id, command_id, request_id, owner_id, header, create_time, events)
LEFT JOIN LATERAL (SELECT true AS found FROM ` + table + ` p
	WHERE p.aggregate = r.aggregate AND p.aggregate_id = r.aggregate_id AND p.version = r.version - 1 AND p.tenant = r.tenant
	LIMIT 1) pred ON true
WHERE r.version = 1 OR pred.found
`)
	if onConflict {
		b.WriteString("ON CONFLICT DO NOTHING\n")
	}
	b.WriteString(`RETURNING aggregate, aggregate_id, tx, seq`)
	return b.String()
}

// esArgsPerRow is the number of parameters of one row of esInsertSQL.
const esArgsPerRow = 11

// esBatchSizes returns the batch sizes the store has statements for, up to
// maxBatch: steps of about 1.5, so that a batch rounded down to one loses
// at most a third, and one connection's statement cache holds two
// statements per size rather than one per possible count.
func esBatchSizes(maxBatch int) []int {
	var sizes []int
	for n := 1; n < maxBatch; {
		sizes = append(sizes, n)
		if n < 4 {
			n++
		} else if n&(n-1) == 0 {
			n += n / 2
		} else {
			n = n / 3 * 4
		}
	}
	return append(sizes, maxBatch)
}

// esClassifySQL reads, for each refused row, what refused it. Each lookup
// is a LATERAL probe of one index, for the reason given at esInsertSQL.
func esClassifySQL(table string) string {
	probe := func(name, sel, cond string) string {
		return `
LEFT JOIN LATERAL (SELECT ` + sel + ` FROM ` + table + ` p
	WHERE p.aggregate = r.aggregate AND p.aggregate_id = r.aggregate_id AND ` + cond + ` LIMIT 1) ` + name + ` ON true`
	}
	return `SELECT r.i, v1.tenant, dup.found IS NOT NULL, taken.found IS NOT NULL, pred.found IS NOT NULL
FROM unnest($1::text[], $2::text[], $3::text[], $4::int4[]) WITH ORDINALITY AS r(aggregate, aggregate_id, request_id, version, i)` +
		probe("v1", "p.tenant", "p.version = 1") +
		probe("dup", "true AS found", "p.request_id = r.request_id") +
		probe("taken", "true AS found", "p.version = r.version") +
		probe("pred", "true AS found", "p.version = r.version - 1")
}

// write runs the batch's insert and classifies the rows that did not go
// in. out[i] answers batch[i]; an eventstore.Failed outcome with no error means
// "unexplained, write again".
func (s *EventStore) write(ctx context.Context, w *esWriter, batch []*esRequest) ([]esResult, error) {
	out := make([]esResult, len(batch))
	err := func() error {
		conn, err := w.connect(ctx, s)
		if err != nil {
			return err
		}
		stmts, ok := s.q.inserts[len(batch)]
		if !ok {
			return fmt.Errorf("no insert statement for a batch of %d", len(batch))
		}
		args := make([]any, 0, len(batch)*esArgsPerRow)
		for _, r := range batch {
			args = esAppendArgs(args, &r.Row)
		}
		inserted, err := s.insert(ctx, conn, stmts.plain, batch, args, out)
		if s.conflict(err) {
			// Nothing was inserted. One row alone is classified at once;
			// a batch is written again, skipping the refused rows.
			clear(inserted)
			err = nil
			if len(batch) > 1 {
				inserted, err = s.insert(ctx, conn, stmts.orSkip, batch, args, out)
			}
		}
		if err != nil {
			return err
		}
		var missing []int
		for i, ok := range inserted {
			if !ok {
				missing = append(missing, i)
			}
		}
		if len(missing) == 0 {
			return nil
		}
		return s.classify(ctx, conn, batch, missing, out)
	}()
	return out, err
}

// insert runs one insert statement and records the rows it returned in out.
func (s *EventStore) insert(ctx context.Context, conn *pgx.Conn, q string, batch []*esRequest, args []any, out []esResult) ([]bool, error) {
	inserted := make([]bool, len(batch))
	rows, err := conn.Query(ctx, q, args...)
	if err != nil {
		return inserted, err
	}
	defer rows.Close()
	index := make(map[esAggregateKey]int, len(batch))
	for i, r := range batch {
		index[r.Row.Key()] = i
	}
	var (
		agg, id string
		tx      uint64
		seq     int64
	)
	for rows.Next() {
		if err := rows.Scan(&agg, &id, &tx, &seq); err != nil {
			return inserted, err
		}
		i, ok := index[esAggregateKey{Aggregate: agg, ID: id}]
		if !ok {
			return inserted, fmt.Errorf("insert returned a row for %s/%s, which is not in the batch", agg, id)
		}
		inserted[i] = true
		out[i] = esResult{Outcome: eventstore.Appended, Pos: factum.Position{Tx: tx, Seq: uint64(seq)}}
	}
	return inserted, rows.Err()
}

// conflict reports whether err is a unique violation of one of the two
// indexes of the append contract, known by the constraint name the server
// reports. A unique violation of any other constraint is not a conflict of
// the contract and stays an error.
func (s *EventStore) conflict(err error) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && pgErr.Code == "23505" &&
		(pgErr.ConstraintName == s.versionIndex || pgErr.ConstraintName == s.requestIndex)
}

// classify says why the rows batch[missing] did not go in. It reads after
// the insert ended, in a new snapshot, so it sees the committed rows that
// refused them: a unique index makes an insert wait for a conflicting
// transaction to end before it fails (or, with ON CONFLICT, skips). The
// order of the checks is the contract's precedence.
func (s *EventStore) classify(ctx context.Context, conn *pgx.Conn, batch []*esRequest, missing []int, out []esResult) error {
	agg, id, req := make([]string, len(missing)), make([]string, len(missing)), make([]string, len(missing))
	ver := make([]int32, len(missing))
	for j, i := range missing {
		r := &batch[i].Row
		agg[j], id[j], req[j], ver[j] = r.Aggregate, r.AggregateID, r.RequestID, int32(r.Version)
	}
	rows, err := conn.Query(ctx, s.q.classify, agg, id, req, ver)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var (
			j                       int64
			tenant                  *string
			dupRequest, taken, pred bool
		)
		if err := rows.Scan(&j, &tenant, &dupRequest, &taken, &pred); err != nil {
			return err
		}
		i := missing[j-1]
		// Failed, unexplained: the predecessor committed after the
		// insert's snapshot.
		o := sqlstore.Refusal(&batch[i].Row, tenant, dupRequest, taken, pred)
		out[i] = esResult{Outcome: o}
	}
	return rows.Err()
}
