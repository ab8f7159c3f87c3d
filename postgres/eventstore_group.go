package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/eventstore"
	"github.com/factum-go/factum/internal/sqlstore"
	"github.com/jackc/pgx/v5/pgconn"
)

// esGroupSQL is the group append: the streams of one aggregate, at
// consecutive versions from $4, in one statement, so in one transaction
// of their own, atomic as any statement is. The predecessor rule is asked
// once, of the first version (an uncorrelated EXISTS: one probe of the
// version index), and admits every row or none; each later row's
// predecessor is the row before it in the same statement, which the
// statement's snapshot cannot see. The unique indexes refuse a taken
// version or request ID, failing the whole statement. Rows are inserted
// in version order (ORDER BY), so their seq, drawn at insert time, follows
// the versions, and they share the transaction's ID: the log, in (tx, seq)
// order, holds the group's streams together and in version order.
//
// The coalesced appends are one autocommit statement per batch, with no
// transaction a group could join: a group cannot be rows of that
// statement (its predecessor rule sees the statement's snapshot, and its
// re-run with ON CONFLICT DO NOTHING would store part of a group), and
// wrapping each batch in a transaction would cost every batch two round
// trips more.
func esGroupSQL(table string) string {
	return `INSERT INTO ` + table + ` (aggregate, aggregate_id, tenant, version, stream_id, command_id, request_id, owner_id, header, create_time, events)
SELECT $1::text, $2::text, $3::text, $4::int4 + (r.i - 1)::int4, r.stream_id, r.command_id, r.request_id, r.owner_id,
	NULLIF(r.header, '')::json, r.create_time, r.events::json
FROM unnest($5::text[], $6::text[], $7::text[], $8::text[], $9::text[], $10::timestamptz[], $11::text[])
	WITH ORDINALITY AS r(stream_id, command_id, request_id, owner_id, header, create_time, events, i)
WHERE $4::int4 = 1 OR EXISTS (SELECT 1 FROM ` + table + ` p
	WHERE p.aggregate = $1::text AND p.aggregate_id = $2::text AND p.version = $4::int4 - 1 AND p.tenant = $3::text)
ORDER BY r.i
RETURNING version, tx, seq`
}

// esGroups writes the store's group appends: the part of its backend that
// makes a group atomic.
type esGroups EventStore

// AppendGroup implements sqlstore.GroupAppends with one statement
// (esGroupSQL) on a connection of the pool. A group that does not go in is
// classified afterwards, as a batch's refused rows are, reading the
// committed rows that refused it: the first stream a rule of the contract
// refuses, each later stream taken to follow the one before it. A group
// nothing explains (its predecessor committed after the statement's
// snapshot) or that a deadlock aborted is written again, up to
// esMaxAttempts times. If ctx ends while the statement runs, the group is
// stored whole or not at all, and AppendGroup returns ctx's error.
func (g *esGroups) AppendGroup(ctx context.Context, ss []*factum.EventStream, rows []esRow) (eventstore.Outcome, int, error) {
	s := (*EventStore)(g)
	fail := func(err error) (eventstore.Outcome, int, error) {
		return eventstore.Failed, 0, fmt.Errorf("postgres: append a group of %s versions %d to %d: %w",
			ss[0].AggregateID, ss[0].Version, ss[len(ss)-1].Version, err)
	}
	args := esGroupArgs(rows)
	for attempt := 1; ; attempt++ {
		pos, err := s.insertGroup(ctx, rows, args)
		var pgErr *pgconn.PgError
		switch {
		case err == nil && pos != nil:
			s.stats.Batches.Add(1)
			s.stats.Streams.Add(int64(len(ss)))
			for i, es := range ss {
				es.Position = pos[i]
			}
			s.appended(pos[len(pos)-1])
			return eventstore.Appended, -1, nil
		case errors.As(err, &pgErr) && pgErr.Code == "40P01":
			// A deadlock aborted the statement: nothing of it is stored.
		case err != nil && !s.conflict(err):
			if ctx.Err() != nil {
				return fail(fmt.Errorf("outcome unknown: %w", ctx.Err()))
			}
			if esRefusedData(err) {
				err = factum.Errorf(factum.CodeIllegalArgument, "the database refused the group: %w", err)
			}
			return fail(err)
		default:
			// Refused: nothing is stored. Say why.
			o, i, err := s.classifyGroup(ctx, rows)
			if err != nil {
				return fail(err)
			}
			if o != eventstore.Failed {
				return o, i, nil
			}
		}
		if attempt >= esMaxAttempts {
			return fail(fmt.Errorf("the group was refused %d times though no stored stream conflicts with it", attempt))
		}
	}
}

// esGroupArgs returns esGroupSQL's arguments for rows.
func esGroupArgs(rows []esRow) []any {
	n := len(rows)
	streamID, commandID, requestID := make([]string, n), make([]string, n), make([]string, n)
	owner, header, events := make([]string, n), make([]string, n), make([]string, n)
	createTime := make([]time.Time, n)
	for i := range rows {
		r := &rows[i]
		streamID[i], commandID[i], requestID[i] = r.StreamID, r.CommandID, r.RequestID
		owner[i], header[i], events[i], createTime[i] = r.Owner, r.Header, r.Events, r.CreateTime
	}
	first := &rows[0]
	return []any{first.Aggregate, first.AggregateID, first.Tenant, int32(first.Version),
		streamID, commandID, requestID, owner, header, createTime, events}
}

// insertGroup runs esGroupSQL and returns the positions of rows, or nil
// when the predecessor rule admitted none.
func (s *EventStore) insertGroup(ctx context.Context, rows []esRow, args []any) ([]factum.Position, error) {
	res, err := s.pool.Query(ctx, s.q.group, args...)
	if err != nil {
		return nil, err
	}
	defer res.Close()
	pos := make([]factum.Position, len(rows))
	n := 0
	for res.Next() {
		var (
			version int32
			tx      uint64
			seq     int64
		)
		if err := res.Scan(&version, &tx, &seq); err != nil {
			return nil, err
		}
		i := int(version) - rows[0].Version
		if i < 0 || i >= len(rows) {
			return nil, fmt.Errorf("the group's insert returned version %d, which is not in the group", version)
		}
		pos[i] = factum.Position{Tx: tx, Seq: uint64(seq)}
		n++
	}
	if err := res.Err(); err != nil {
		return nil, err
	}
	switch n {
	case 0:
		return nil, nil
	case len(rows):
		return pos, nil
	}
	return nil, fmt.Errorf("the group's insert stored %d of its %d streams", n, len(rows))
}

// classifyGroup says which stream of a refused group a rule of the
// contract refuses, and why, reading the committed rows in a new snapshot
// (see classify). The first stream is classified as a single append is;
// each later one as the version after it, whose predecessor is in the
// group. Failed with a nil error: no rule explains the refusal.
func (s *EventStore) classifyGroup(ctx context.Context, rows []esRow) (eventstore.Outcome, int, error) {
	n := len(rows)
	agg, id, req, ver := make([]string, n), make([]string, n), make([]string, n), make([]int32, n)
	for i := range rows {
		r := &rows[i]
		agg[i], id[i], req[i], ver[i] = r.Aggregate, r.AggregateID, r.RequestID, int32(r.Version)
	}
	res, err := s.pool.Query(ctx, s.q.classify, agg, id, req, ver)
	if err != nil {
		return eventstore.Failed, 0, err
	}
	defer res.Close()
	out := make([]eventstore.Outcome, n)
	for res.Next() {
		var (
			j                       int64
			tenant                  *string
			dupRequest, taken, pred bool
		)
		if err := res.Scan(&j, &tenant, &dupRequest, &taken, &pred); err != nil {
			return eventstore.Failed, 0, err
		}
		i := int(j - 1)
		if i < 0 || i >= n {
			return eventstore.Failed, 0, fmt.Errorf("classify returned row %d of %d", j, n)
		}
		out[i] = sqlstore.Refusal(&rows[i], tenant, dupRequest, taken, pred || i > 0)
	}
	if err := res.Err(); err != nil {
		return eventstore.Failed, 0, err
	}
	for i, o := range out {
		if o != eventstore.Failed {
			return o, i, nil
		}
	}
	return eventstore.Failed, 0, nil
}
