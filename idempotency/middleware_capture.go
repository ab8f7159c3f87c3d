package idempotency

import (
	"bytes"
	"net/http"
)

// capture passes a handler's response through to the client and keeps a
// copy for the record: the status, the headers worth replaying, and the
// body up to a limit.
type capture struct {
	w       http.ResponseWriter
	keep    []string // canonical names of the headers to keep
	limit   int
	status  int
	header  http.Header
	body    bytes.Buffer
	size    int64
	tooLong bool
}

func (c *capture) Header() http.Header { return c.w.Header() }

func (c *capture) WriteHeader(status int) {
	if c.status != 0 {
		c.w.WriteHeader(status) // let net/http report the superfluous call
		return
	}
	if status >= 100 && status < 200 && status != http.StatusSwitchingProtocols {
		// Informational responses (103 Early Hints) precede the real one.
		c.w.WriteHeader(status)
		return
	}
	c.status = status
	c.snapshot()
	c.w.WriteHeader(status)
}

// snapshot copies the headers to replay as they are when the status is
// sent: later changes never reach the client, so they are not kept.
func (c *capture) snapshot() {
	c.header = make(http.Header, len(c.keep))
	h := c.w.Header()
	for _, k := range c.keep {
		if vs := h[k]; len(vs) > 0 {
			c.header[k] = append([]string(nil), vs...)
		}
	}
}

func (c *capture) Write(p []byte) (int, error) {
	if c.status == 0 {
		c.WriteHeader(http.StatusOK)
	}
	c.size += int64(len(p))
	if !c.tooLong {
		if c.size > int64(c.limit) {
			c.tooLong = true
			c.body = bytes.Buffer{} // the copy is useless now; free it
		} else {
			c.body.Write(p)
		}
	}
	return c.w.Write(p)
}

// Flush passes through, so streaming handlers still stream.
func (c *capture) Flush() {
	if c.status == 0 {
		c.WriteHeader(http.StatusOK)
	}
	if f, ok := c.w.(http.Flusher); ok {
		f.Flush()
	}
}

// Unwrap lets http.ResponseController reach the underlying writer.
func (c *capture) Unwrap() http.ResponseWriter { return c.w }

// result returns the response as sent: a handler that wrote nothing sent
// 200 with its headers.
func (c *capture) result() storedResponse {
	if c.status == 0 {
		c.status = http.StatusOK
		c.snapshot()
	}
	if c.tooLong {
		return storedResponse{status: c.status, header: c.header, omitted: c.size}
	}
	return storedResponse{status: c.status, header: c.header, body: c.body.Bytes()}
}
