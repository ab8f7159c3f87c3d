package httpapi

import (
	"fmt"
	"log/slog"
	"net/http"
	"strings"

	"github.com/factum-go/factum"
)

// jsonErrors serves r with next so that every error response a client can
// see is an ErrorBody: an error written as text by net/http inside the
// handler chain (http.Error from a middleware, the mux's own answers) is
// replaced by the typed JSON error of its status, and a panic becomes a
// 500 ErrorBody when no response was started. The text of a replaced body
// is dropped, not passed on: it may hold internals. Errors net/http's
// server writes before any handler runs (a malformed request line or
// header, 431) never reach a handler: ErrorListener rewrites those.
func jsonErrors(w http.ResponseWriter, r *http.Request, next http.Handler) {
	ew := &errorWriter{ResponseWriter: w}
	defer func() {
		if p := recover(); p != nil {
			if p == http.ErrAbortHandler {
				panic(p)
			}
			slog.ErrorContext(r.Context(), "httpapi: handler panicked", "method", r.Method, "path", r.URL.Path, "panic", fmt.Sprint(p))
			if !ew.wroteHeader {
				writeError(ew.ResponseWriter, factum.NewError(factum.CodeInternalServerError, "internal error"))
				return
			}
			panic(http.ErrAbortHandler) // mid-response: cut the connection
		}
	}()
	next.ServeHTTP(ew, r)
}

// errorWriter is the ResponseWriter of jsonErrors.
type errorWriter struct {
	http.ResponseWriter
	wroteHeader bool
	swallow     bool // the text body of a replaced error
}

// WriteHeader replaces a text error response by its ErrorBody.
func (e *errorWriter) WriteHeader(code int) {
	if e.wroteHeader {
		e.ResponseWriter.WriteHeader(code) // net/http logs the superfluous call
		return
	}
	e.wroteHeader = true
	h := e.Header()
	if code < 400 || !strings.HasPrefix(h.Get("Content-Type"), "text/plain") {
		e.ResponseWriter.WriteHeader(code)
		return
	}
	e.swallow = true
	h.Del("Content-Length")
	writeJSON(e.ResponseWriter, code, ErrorBody{Code: statusCode(code), Message: statusMessage(code)})
}

func (e *errorWriter) Write(b []byte) (int, error) {
	if !e.wroteHeader {
		e.WriteHeader(http.StatusOK)
	}
	if e.swallow {
		return len(b), nil
	}
	return e.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach the connection (flushes for
// event streams, deadlines).
func (e *errorWriter) Unwrap() http.ResponseWriter { return e.ResponseWriter }

// Flush implements http.Flusher for handlers that assert it.
func (e *errorWriter) Flush() {
	if f, ok := e.ResponseWriter.(http.Flusher); ok {
		if !e.wroteHeader {
			e.WriteHeader(http.StatusOK)
		}
		f.Flush()
	}
}

// statusCode is the factum code an error status stands for when nothing
// more is known of the error.
func statusCode(status int) factum.Code {
	switch {
	case status == http.StatusNotFound:
		return factum.CodeNotFound
	case status == http.StatusRequestTimeout:
		return factum.CodeRequestTimeout
	case status == http.StatusTooManyRequests:
		return factum.CodeTooManyRequests
	case status >= 500:
		return factum.CodeInternalServerError
	}
	return factum.CodeBadRequest
}

func statusMessage(status int) string {
	if t := http.StatusText(status); t != "" {
		return strings.ToLower(t[:1]) + t[1:]
	}
	return fmt.Sprintf("status %d", status)
}
