package postgres

import (
	"strings"
	"unicode/utf8"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/internal/sqlstore"
)

// esRow is an event stream flattened into the columns of the streams table.
type esRow = sqlstore.EventRow

// esAggregateKey identifies an aggregate inside one batch.
type esAggregateKey = sqlstore.AggregateKey

// esAppendArgs appends the row's parameters of esInsertSQL to args.
func esAppendArgs(args []any, r *esRow) []any {
	return append(args, r.Aggregate, r.AggregateID, r.Tenant, int32(r.Version), r.StreamID,
		r.CommandID, r.RequestID, r.Owner, r.Header, r.CreateTime, r.Events)
}

// esEncode flattens a validated stream, refusing what PostgreSQL cannot
// store as given (see sqlstore.EncodeStream).
func esEncode(s *factum.EventStream) (esRow, error) { return sqlstore.EncodeStream(&dialect, s) }

// esCheckText refuses strings a PostgreSQL text column cannot store.
func esCheckText(what, s string) error {
	if !utf8.ValidString(s) {
		return factum.IllegalArgument(what + " is not valid UTF-8")
	}
	if strings.IndexByte(s, 0) >= 0 {
		return factum.IllegalArgument(what + " holds a NUL byte")
	}
	return nil
}

// esColumns are the columns the store reads: the transaction ID, then the
// shared ones.
const esColumns = `tx, ` + sqlstore.EventColumns

// esScan reads one row of esColumns.
func esScan(rows sqlstore.Rows, r *sqlstore.ScannedRow) error {
	return rows.Scan(&r.Tx, &r.Seq, &r.Aggregate, &r.AggregateID, &r.Tenant, &r.Version, &r.StreamID,
		&r.CommandID, &r.RequestID, &r.Owner, &r.Header, &r.CreateTime, &r.Events)
}
