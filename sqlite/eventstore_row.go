package sqlite

import (
	"github.com/factum-go/factum/internal/sqlstore"
)

// esRow is an event stream flattened into the columns of the streams table.
type esRow = sqlstore.EventRow

// esArgs returns the row as the insert statement's arguments. STRICT TEXT
// columns take strings, not byte slices (which bind as BLOBs); create
// times are Unix microseconds.
func esArgs(r *esRow) []any {
	var header any
	if r.Header != "" {
		header = r.Header
	}
	return []any{r.Aggregate, r.AggregateID, r.Tenant, r.Version, r.StreamID,
		r.CommandID, r.RequestID, r.Owner, header, r.CreateTime.UnixMicro(), r.Events}
}

// esScan reads one row of sqlstore.EventColumns, through the *sql.Rows
// itself: a call through the interface would allocate the arguments for
// every row.
func esScan(rows sqlstore.Rows, r *sqlstore.ScannedRow) error {
	if err := sqlstore.StdRows(rows).Scan(&r.Seq, &r.Aggregate, &r.AggregateID, &r.Tenant, &r.Version, &r.StreamID,
		&r.CommandID, &r.RequestID, &r.Owner, &r.Header, &r.CreateMicros, &r.Events); err != nil {
		return err
	}
	r.CreateTime = sqlstore.FromMicros(r.CreateMicros)
	return nil
}
