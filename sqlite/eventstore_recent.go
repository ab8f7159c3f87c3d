package sqlite

import (
	"sort"
	"sync"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/internal/sqlstore"
)

// esRecentMax and esRecentBytes bound the latest committed rows an event
// store keeps for the log's readers: by count, and by the bytes of their
// events and headers, so that large streams cost a bounded amount of
// memory (a read the kept rows cannot answer goes to the table).
const (
	esRecentMax   = 1024
	esRecentBytes = 8 << 20
)

// esRecent holds the rows the store itself committed most recently, by
// position, so that ReadLog answers a full page of them from memory: a
// consumer catching up reads the streams it missed again from the table
// otherwise, in a read transaction of its own per group.
//
// A page from it is what the table holds: it answers only a run of limit
// consecutive positions starting right after the reader's. Positions are
// handed out in commit order (see EventStore), so no stream of another
// process, or of another store over the same table, can sit inside such a
// run: it would have taken one of its positions. A shorter run is not
// enough: another process may have committed the positions after it,
// which a read of the table would return, so such a read goes to the
// table.
type esRecent struct {
	mu    sync.Mutex
	rows  []esRecentRow // ascending by seq, at most esRecentMax
	bytes int           // the rows' size, at most esRecentBytes
}

// esRecentRow is one committed row and its position.
type esRecentRow struct {
	seq int64
	row sqlstore.EventRow
}

// size is what the row counts against esRecentBytes: its events and
// header, and a fixed share for the rest.
func (x *esRecentRow) size() int { return len(x.row.Events) + len(x.row.Header) + 256 }

// add keeps committed rows. Batches of one transaction may be added in
// any order.
func (r *esRecent) add(rows []esRecentRow) {
	if len(rows) == 0 {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, x := range rows {
		n := len(r.rows)
		if n == 0 || r.rows[n-1].seq < x.seq {
			r.rows = append(r.rows, x)
			r.bytes += x.size()
			continue
		}
		i := sort.Search(n, func(i int) bool { return r.rows[i].seq >= x.seq })
		if r.rows[i].seq == x.seq {
			continue
		}
		r.rows = append(r.rows, esRecentRow{})
		copy(r.rows[i+1:], r.rows[i:])
		r.rows[i] = x
		r.bytes += x.size()
	}
	drop := 0
	for drop < len(r.rows) && (len(r.rows)-drop > esRecentMax || r.bytes > esRecentBytes) {
		r.bytes -= r.rows[drop].size()
		drop++
	}
	if drop == 0 {
		return
	}
	// The dropped rows are cleared, so that the array does not hold their
	// events, and the rows are copied to a fresh array now and then, so
	// that the array does not grow without end.
	clear(r.rows[:drop])
	if cap(r.rows) > 4*esRecentMax {
		r.rows = append([]esRecentRow(nil), r.rows[drop:]...)
	} else {
		r.rows = r.rows[drop:]
	}
}

// rowsAfter returns limit held rows with consecutive positions starting
// at after+1, if it holds them (see esRecent); ok is false when the read
// must go to the table.
func (r *esRecent) rowsAfter(after uint64, limit int) (rows []esRecentRow, ok bool) {
	if limit <= 0 {
		return nil, false
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	i := sort.Search(len(r.rows), func(i int) bool { return uint64(r.rows[i].seq) > after })
	if i == len(r.rows) || uint64(r.rows[i].seq) != after+1 {
		return nil, false
	}
	j := i + 1
	for j < len(r.rows) && j-i < limit && r.rows[j].seq == r.rows[j-1].seq+1 {
		j++
	}
	if j-i < limit {
		return nil, false
	}
	return append([]esRecentRow(nil), r.rows[i:j]...), true
}

// decodeRecent decodes rows as a read of the table would return them.
func decodeRecent(boundedContext string, rows []esRecentRow) ([]factum.EventStream, error) {
	out := make([]factum.EventStream, 0, len(rows))
	for i := range rows {
		x := &rows[i]
		sr := sqlstore.ScannedRow{
			Seq:         x.seq,
			Aggregate:   x.row.Aggregate,
			AggregateID: x.row.AggregateID,
			Tenant:      x.row.Tenant,
			Version:     x.row.Version,
			StreamID:    x.row.StreamID,
			CommandID:   x.row.CommandID,
			RequestID:   x.row.RequestID,
			Owner:       x.row.Owner,
			Events:      []byte(x.row.Events),
			// Stored to the microsecond, read back in UTC.
			CreateTime: sqlstore.FromMicros(x.row.CreateTime.UnixMicro()),
		}
		if x.row.Header != "" {
			sr.Header = []byte(x.row.Header)
		}
		st, err := sqlstore.DecodeStream(&dialect, boundedContext, &sr)
		if err != nil {
			return nil, err
		}
		out = append(out, st)
	}
	return out, nil
}
