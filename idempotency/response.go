package idempotency

import (
	"encoding/binary"
	"errors"
	"net/http"
)

// storedResponse is an HTTP response as the middleware keeps it in
// Record.Response.
type storedResponse struct {
	status int
	header http.Header
	body   []byte
	// omitted is the length of a body that was too large to keep (body
	// is then nil); zero when the body is kept.
	omitted int64
}

// The encoding of a storedResponse: a version byte, a flags byte, the
// status as two bytes, the number of header lines, each line's name and
// value, then the body; lengths and counts are uvarints. It is compact,
// binary-safe, and its version byte lets a later format coexist with
// records already stored.
const (
	responseFormat      = 1
	flagBodyOmitted     = 1
	maxStoredHeaderRows = 1 << 10
)

var errBadResponse = errors.New("idempotency: stored response is malformed")

func (r storedResponse) encode() []byte {
	n := 4 + binary.MaxVarintLen64*2 + len(r.body)
	for k, vs := range r.header {
		for _, v := range vs {
			n += 2*binary.MaxVarintLen64 + len(k) + len(v)
		}
	}
	b := make([]byte, 0, n)
	var flags byte
	if r.omitted > 0 {
		flags |= flagBodyOmitted
	}
	b = append(b, responseFormat, flags, byte(r.status>>8), byte(r.status))
	rows := 0
	for _, vs := range r.header {
		rows += len(vs)
	}
	b = binary.AppendUvarint(b, uint64(rows))
	for k, vs := range r.header {
		for _, v := range vs {
			b = appendString(b, k)
			b = appendString(b, v)
		}
	}
	if r.omitted > 0 {
		return binary.AppendUvarint(b, uint64(r.omitted))
	}
	b = binary.AppendUvarint(b, uint64(len(r.body)))
	return append(b, r.body...)
}

func appendString(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

// decodeResponse parses what encode wrote; anything else is
// errBadResponse, never a panic.
func decodeResponse(b []byte) (storedResponse, error) {
	if len(b) < 4 || b[0] != responseFormat || b[1]&^flagBodyOmitted != 0 {
		return storedResponse{}, errBadResponse
	}
	r := storedResponse{status: int(b[2])<<8 | int(b[3]), header: http.Header{}}
	if r.status < 100 || r.status > 999 {
		return storedResponse{}, errBadResponse
	}
	d := decoder{b: b[4:]}
	rows := d.uvarint()
	if rows > maxStoredHeaderRows {
		return storedResponse{}, errBadResponse
	}
	for range rows {
		k, v := d.string(), d.string()
		if d.bad {
			return storedResponse{}, errBadResponse
		}
		r.header[k] = append(r.header[k], v)
	}
	n := d.uvarint()
	if b[1]&flagBodyOmitted != 0 {
		if d.bad || n == 0 || n > 1<<62 || len(d.b) != 0 {
			return storedResponse{}, errBadResponse
		}
		r.omitted = int64(n)
		return r, nil
	}
	if d.bad || n != uint64(len(d.b)) {
		return storedResponse{}, errBadResponse
	}
	r.body = d.b
	return r, nil
}

// decoder reads uvarints and strings, remembering the first failure.
type decoder struct {
	b   []byte
	bad bool
}

func (d *decoder) uvarint() uint64 {
	v, n := binary.Uvarint(d.b)
	if n <= 0 {
		d.bad = true
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *decoder) string() string {
	n := d.uvarint()
	if d.bad || n > uint64(len(d.b)) {
		d.bad = true
		return ""
	}
	s := string(d.b[:n])
	d.b = d.b[n:]
	return s
}
