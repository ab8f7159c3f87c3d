package postgres

import (
	"strings"
	"time"
	"unicode/utf8"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/internal/sqlstore"
)

// esRow is an event stream flattened into the columns of the streams table.
type esRow = sqlstore.EventRow

// esBatchColumns are a batch's rows as the arrays esInsertSQL unnests, one
// per column. A writer keeps one and reuses it for every batch: the
// arrays are encoded into the statement's message before the statement
// returns.
type esBatchColumns struct {
	aggregate, aggregateID, tenant []string
	version                        []int32
	streamID, commandID, requestID []string
	owner, header                  []string
	createTime                     []time.Time
	events                         []string
	// row holds esInsertOneSQL's arguments for a batch of one.
	row [11]any
}

// one returns esInsertOneSQL's arguments for req's row.
func (c *esBatchColumns) one(req *esRequest) []any {
	r := &req.Row
	c.row = [11]any{r.Aggregate, r.AggregateID, r.Tenant, int32(r.Version), r.StreamID, r.CommandID,
		r.RequestID, r.Owner, r.Header, r.CreateTime, r.Events}
	return c.row[:]
}

// fill sets c to the rows of batch and returns esInsertSQL's arguments.
func (c *esBatchColumns) fill(batch []*esRequest) []any {
	c.aggregate, c.aggregateID, c.tenant = c.aggregate[:0], c.aggregateID[:0], c.tenant[:0]
	c.version = c.version[:0]
	c.streamID, c.commandID, c.requestID = c.streamID[:0], c.commandID[:0], c.requestID[:0]
	c.owner, c.header, c.createTime, c.events = c.owner[:0], c.header[:0], c.createTime[:0], c.events[:0]
	for _, req := range batch {
		r := &req.Row
		c.aggregate = append(c.aggregate, r.Aggregate)
		c.aggregateID = append(c.aggregateID, r.AggregateID)
		c.tenant = append(c.tenant, r.Tenant)
		c.version = append(c.version, int32(r.Version))
		c.streamID = append(c.streamID, r.StreamID)
		c.commandID = append(c.commandID, r.CommandID)
		c.requestID = append(c.requestID, r.RequestID)
		c.owner = append(c.owner, r.Owner)
		c.header = append(c.header, r.Header)
		c.createTime = append(c.createTime, r.CreateTime)
		c.events = append(c.events, r.Events)
	}
	return []any{c.aggregate, c.aggregateID, c.tenant, c.version, c.streamID, c.commandID,
		c.requestID, c.owner, c.header, c.createTime, c.events}
}

// clear drops the batch's strings, so that a writer between batches does
// not keep their events alive.
func (c *esBatchColumns) clear() {
	for _, col := range [][]string{c.aggregate, c.aggregateID, c.tenant, c.streamID, c.commandID, c.requestID, c.owner, c.header, c.events} {
		clear(col)
	}
	clear(c.row[:])
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
