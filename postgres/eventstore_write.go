package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/eventstore"
	"github.com/factum-go/factum/internal/sqlstore"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// esInsertSQL is the append statement, for a batch of any size. Its WHERE
// carries the predecessor rule: version 1, or version - 1 exists in the
// same tenant; the unique indexes refuse a taken version or request ID. A
// row the WHERE filters out does not come back from RETURNING and is
// classified afterwards.
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
// The rows come as one array per column, unnested in the select list (a
// ProjectSet streams the rows; several arrays unnested in FROM are
// materialized into a tuplestore first), so that one statement
// (and one cached plan per connection) serves every batch size: a batch is
// as large as the queue allows, never rounded down to a size the store has
// a statement for, and the client encodes eleven parameters per batch
// rather than eleven per row. Rows are inserted in array order, sorted by
// aggregate: concurrent statements take index locks in the same order and
// cannot deadlock each other.
func esInsertSQL(table string, onConflict bool) string {
	q := `INSERT INTO ` + table + ` (aggregate, aggregate_id, tenant, version, stream_id, command_id, request_id, owner_id, header, create_time, events)
SELECT r.aggregate, r.aggregate_id, r.tenant, r.version, r.stream_id, r.command_id, r.request_id, r.owner_id,
	NULLIF(r.header, '')::json, r.create_time, r.events::json
FROM (SELECT unnest($1::text[]) AS aggregate, unnest($2::text[]) AS aggregate_id, unnest($3::text[]) AS tenant,
		unnest($4::int4[]) AS version, unnest($5::text[]) AS stream_id, unnest($6::text[]) AS command_id,
		unnest($7::text[]) AS request_id, unnest($8::text[]) AS owner_id, unnest($9::text[]) AS header,
		unnest($10::timestamptz[]) AS create_time, unnest($11::text[]) AS events) r
LEFT JOIN LATERAL (SELECT true AS found FROM ` + table + ` p
	WHERE p.aggregate = r.aggregate AND p.aggregate_id = r.aggregate_id AND p.version = r.version - 1 AND p.tenant = r.tenant
	LIMIT 1) pred ON true
WHERE r.version = 1 OR pred.found
`
	if onConflict {
		q += "ON CONFLICT DO NOTHING\n"
	}
	return q + `RETURNING aggregate, aggregate_id, tx, seq`
}

// esInsertOneSQL is the append statement for a batch of one stream: the
// same insert over one row of scalar parameters. Unnesting eleven
// one-element arrays costs a lone append more than it saves (the single
// appends of scripts/bench-append-pg.sh ran at 0.77–0.96 of pgbench with
// the arrays against 1.05–1.23 with this statement, in the same rounds),
// and one row needs no ON CONFLICT variant: a refused row alone is
// classified at once.
func esInsertOneSQL(table string) string {
	return `INSERT INTO ` + table + ` (aggregate, aggregate_id, tenant, version, stream_id, command_id, request_id, owner_id, header, create_time, events)
SELECT r.aggregate, r.aggregate_id, r.tenant, r.version, r.stream_id, r.command_id, r.request_id, r.owner_id,
	NULLIF(r.header, '')::json, r.create_time, r.events::json
FROM (VALUES ($1::text, $2::text, $3::text, $4::int4, $5::text, $6::text, $7::text, $8::text, $9::text, $10::timestamptz, $11::text))
	AS r(aggregate, aggregate_id, tenant, version, stream_id, command_id, request_id, owner_id, header, create_time, events)
LEFT JOIN LATERAL (SELECT true AS found FROM ` + table + ` p
	WHERE p.aggregate = r.aggregate AND p.aggregate_id = r.aggregate_id AND p.version = r.version - 1 AND p.tenant = r.tenant
	LIMIT 1) pred ON true
WHERE r.version = 1 OR pred.found
RETURNING aggregate, aggregate_id, tx, seq`
}

// esInserts returns the insert statements of table.
func esInserts(table string) esInsertStmts {
	return esInsertStmts{plain: esInsertSQL(table, false), orSkip: esInsertSQL(table, true), one: esInsertOneSQL(table)}
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
		stmts := s.q.insert
		q, args := stmts.plain, []any(nil)
		if len(batch) == 1 {
			q, args = stmts.one, w.cols.one(batch[0])
		} else {
			args = w.cols.fill(batch)
		}
		defer w.cols.clear()
		inserted, err := s.insert(ctx, conn, q, batch, args, out)
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
	var (
		agg, id string
		tx      uint64
		seq     int64
		next    int // where the next returned row is looked for first
	)
	for rows.Next() {
		if err := rows.Scan(&agg, &id, &tx, &seq); err != nil {
			return inserted, err
		}
		i := esFind(batch, next, agg, id)
		if i < 0 {
			return inserted, fmt.Errorf("insert returned a row for %s/%s, which is not in the batch", agg, id)
		}
		next = i + 1
		inserted[i] = true
		out[i] = esResult{Outcome: eventstore.Appended, Pos: factum.Position{Tx: tx, Seq: uint64(seq)}}
	}
	return inserted, rows.Err()
}

// esFind returns the index in batch of the aggregate agg/id, -1 if none,
// looking from from on and then from the start. The statement returns its
// rows in the batch's order, less those it skipped, so the search is
// usually one comparison; a batch holds an aggregate once.
func esFind(batch []*esRequest, from int, agg, id string) int {
	for k := range batch {
		i := (from + k) % len(batch)
		if r := &batch[i].Row; r.AggregateID == id && r.Aggregate == agg {
			return i
		}
	}
	return -1
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
