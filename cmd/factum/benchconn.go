package main

import (
	"bufio"
	"context"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// connPool sends bench requests over plain HTTP/1.1 keep-alive
// connections, one request at a time per connection, written and read by
// the calling goroutine. net/http's Transport hands every request to two
// goroutines of its own per connection; on a machine the client shares
// with the server, those hand-offs cost as much as the request, and the
// bench would measure itself instead of the server (wrk, the reference,
// works the same way: one connection per concurrent request, no
// hand-offs). https URLs use net/http.
type connPool struct {
	host    string // for the Host header
	addr    string // to dial
	prefix  string // the URL's path, before every request's
	timeout time.Duration
	idle    chan *benchConn
}

type benchConn struct {
	c  net.Conn
	br *bufio.Reader
	bw *bufio.Writer
}

func newConnPool(u *url.URL, size int, timeout time.Duration) *connPool {
	addr := u.Host
	if u.Port() == "" {
		addr = net.JoinHostPort(u.Hostname(), "80")
	}
	return &connPool{host: u.Host, addr: addr, prefix: strings.TrimRight(u.Path, "/"), timeout: timeout, idle: make(chan *benchConn, size)}
}

func (p *connPool) get(ctx context.Context) (*benchConn, error) {
	select {
	case c := <-p.idle:
		return c, nil
	default:
	}
	d := net.Dialer{Timeout: p.timeout}
	c, err := d.DialContext(ctx, "tcp", p.addr)
	if err != nil {
		return nil, err
	}
	return &benchConn{c: c, br: bufio.NewReaderSize(c, 8<<10), bw: bufio.NewWriterSize(c, 4<<10)}, nil
}

func (p *connPool) put(c *benchConn) {
	select {
	case p.idle <- c:
	default:
		c.c.Close()
	}
}

// post sends one POST with a JSON body and returns the status, headers
// and body of the answer.
func (p *connPool) post(ctx context.Context, path string, headers [][2]string, body string) (int, http.Header, []byte, error) {
	c, err := p.get(ctx)
	if err != nil {
		return 0, nil, nil, err
	}
	stop := context.AfterFunc(ctx, func() { _ = c.c.SetDeadline(time.Unix(1, 0)) })
	defer stop()
	_ = c.c.SetDeadline(time.Now().Add(p.timeout))
	w := c.bw
	w.WriteString("POST ")
	w.WriteString(p.prefix)
	w.WriteString(path)
	w.WriteString(" HTTP/1.1\r\nHost: ")
	w.WriteString(p.host)
	w.WriteString("\r\nContent-Type: application/json\r\nContent-Length: ")
	w.WriteString(strconv.Itoa(len(body)))
	w.WriteString("\r\n")
	for _, h := range headers {
		w.WriteString(h[0])
		w.WriteString(": ")
		w.WriteString(h[1])
		w.WriteString("\r\n")
	}
	w.WriteString("\r\n")
	c.bw.WriteString(body)
	if err := c.bw.Flush(); err != nil {
		c.c.Close()
		return 0, nil, nil, err
	}
	res, err := http.ReadResponse(c.br, nil)
	if err != nil {
		c.c.Close()
		return 0, nil, nil, err
	}
	b, err := io.ReadAll(res.Body)
	res.Body.Close()
	if err != nil {
		c.c.Close()
		return 0, nil, nil, err
	}
	if res.Close || ctx.Err() != nil {
		c.c.Close()
	} else {
		p.put(c)
	}
	return res.StatusCode, res.Header, b, nil
}
