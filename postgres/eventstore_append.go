package postgres

import (
	"errors"
	"fmt"
	"slices"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/eventstore"
	"github.com/factum-go/factum/internal/sqlstore"
	"github.com/jackc/pgx/v5/pgconn"
)

// esResult is a writer's answer to one request.
type esResult = sqlstore.AppendResult

// esRequest is one Append waiting for a writer.
type esRequest = sqlstore.AppendRequest

// esMaxAttempts bounds how often a row is written again when nothing
// explains why it did not go in (its predecessor committed after the
// statement's snapshot was taken).
const esMaxAttempts = 3

// Appends are written by s.appends, the eventstore front end's backend:
// concurrent appends of different aggregates are written together in one
// statement; each caller still gets its own outcome. If ctx ends while
// the append is being written, Append returns ctx's error at once, the
// server is asked to cancel the statement once every append in it has
// been abandoned, and the outcome is unknown (Lookup tells). An append
// whose ctx ends before it is written is never written.

// flush writes one batch and answers its callers, returning the requests
// to write again. Requests whose callers have gone are dropped unwritten;
// the statement is cancelled only when every caller in it has gone, so
// that one caller's cancellation cannot fail the others.
func (s *EventStore) flush(w *esWriter, batch []*esRequest) (retry []*esRequest) {
	live := sqlstore.Live(batch)
	if len(live) == 0 {
		return nil
	}
	slices.SortFunc(live, func(a, b *esRequest) int { return a.Row.Compare(&b.Row) })
	ctx, release := sqlstore.WriteContext(live)
	defer release()

	out, err := s.write(ctx, w, live)
	if err != nil {
		var pgErr *pgconn.PgError
		switch {
		case errors.As(err, &pgErr) && pgErr.Code == "40P01":
			// A deadlock aborted the statement (nothing of it is
			// stored): write the batch again.
			for _, r := range live {
				if r.Attempts++; r.Attempts < esMaxAttempts {
					retry = append(retry, r)
				} else {
					r.Done <- esResult{Outcome: eventstore.Failed, Err: err}
				}
			}
			return retry
		case len(live) > 1 && esRefusedRow(err):
			// The server refused one row (nothing is stored). Write
			// each request on its own, so that the bad one cannot fail
			// the others.
			for _, r := range live {
				retry = append(retry, s.flush(w, []*esRequest{r})...)
			}
			return retry
		}
		if errors.As(err, &pgErr) && len(live) == 1 && esRefusedData(err) {
			err = factum.Errorf(factum.CodeIllegalArgument, "the database refused the stream: %w", err)
		}
		for _, r := range live {
			r.Done <- esResult{Outcome: eventstore.Failed, Err: err}
		}
		return retry
	}
	var last factum.Position
	s.stats.Batches.Add(1)
	for i, r := range live {
		res := out[i]
		if res.Outcome == eventstore.Failed && res.Err == nil {
			// Nothing explains the refusal yet: try again.
			if r.Attempts++; r.Attempts < esMaxAttempts {
				retry = append(retry, r)
				continue
			}
			res.Err = fmt.Errorf("the row was refused %d times though no stored stream conflicts with it", r.Attempts)
		}
		if res.Outcome == eventstore.Appended {
			s.stats.Streams.Add(1)
			if last.Less(res.Pos) {
				last = res.Pos
			}
		}
		r.Done <- res
	}
	if !last.IsZero() {
		s.appended(last)
	}
	return retry
}

// esRefusedRow reports whether err is the server refusing a row: for its
// data (esRefusedData), or for a unique violation outside the contract's
// two indexes (write handles those). The statement failed as a whole and
// stored nothing.
func esRefusedRow(err error) bool {
	var pgErr *pgconn.PgError
	return esRefusedData(err) || errors.As(err, &pgErr) && pgErr.Code == "23505"
}

// esRefusedData reports whether err is the server refusing a row's content
// (a data exception, an integrity violation other than a unique one, a
// size limit).
func esRefusedData(err error) bool {
	var pgErr *pgconn.PgError
	if !errors.As(err, &pgErr) {
		return false
	}
	switch pgErr.Code[:2] {
	case "22", "54":
		return true
	case "23":
		return pgErr.Code != "23505"
	}
	return false
}
