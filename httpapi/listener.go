package httpapi

import (
	"bytes"
	"encoding/json"
	"net"
	"net/http"
	"strconv"
)

// ErrorListener returns ln with its connections' writes watched for the
// error responses net/http's server writes by itself, before any handler
// runs (a malformed request line or header, 431 for oversized headers, 501
// for an unknown transfer encoding): each is rewritten into the typed JSON
// ErrorBody of its status, so that no error a client sees is text/plain.
// Everything else passes through unchanged.
//
// Serve the Handler on it: srv.Serve(httpapi.ErrorListener(ln)). Under TLS
// put it above the TLS layer (tls.NewListener(ln, cfg), then
// ErrorListener), since below it the bytes are encrypted and pass through
// untouched.
func ErrorListener(ln net.Listener) net.Listener { return errorListener{ln} }

type errorListener struct{ net.Listener }

func (l errorListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &errorConn{Conn: c}, nil
}

// errorConn rewrites net/http's own error responses.
type errorConn struct{ net.Conn }

// serverErrorHeaders is what net/http's server writes right after the
// status line of an error it answers itself, and nowhere else: a handler's
// response always carries a Date header before its end.
const serverErrorHeaders = "\r\nContent-Type: text/plain; charset=utf-8\r\nConnection: close\r\n\r\n"

func (c *errorConn) Write(b []byte) (int, error) {
	out, ok := rewriteServerError(b)
	if !ok {
		return c.Conn.Write(b)
	}
	if _, err := c.Conn.Write(out); err != nil {
		return 0, err
	}
	return len(b), nil
}

// rewriteServerError turns one of net/http's own error responses (written
// in one call: "HTTP/1.1 <code> <text>" + serverErrorHeaders + text) into
// the same status with an ErrorBody.
func rewriteServerError(b []byte) ([]byte, bool) {
	const proto = "HTTP/1.1 "
	if !bytes.HasPrefix(b, []byte(proto)) || len(b) < len(proto)+3 {
		return nil, false
	}
	end := bytes.IndexByte(b, '\r')
	if end < 0 || !bytes.HasPrefix(b[end:], []byte(serverErrorHeaders)) {
		return nil, false
	}
	status, err := strconv.Atoi(string(b[len(proto) : len(proto)+3]))
	if err != nil || status < 400 {
		return nil, false
	}
	body, err := json.Marshal(ErrorBody{Code: statusCode(status), Message: "the request could not be read: " + statusMessage(status)})
	if err != nil {
		return nil, false
	}
	body = append(body, '\n')
	var out bytes.Buffer
	out.WriteString(proto + strconv.Itoa(status) + " " + http.StatusText(status) + "\r\n")
	out.WriteString("Content-Type: application/json\r\nX-Content-Type-Options: nosniff\r\nConnection: close\r\n")
	out.WriteString("Content-Length: " + strconv.Itoa(len(body)) + "\r\n\r\n")
	out.Write(body)
	return out.Bytes(), true
}
