package aggregate

import (
	"context"
	"database/sql/driver"
	"errors"
	"io"
	"math/rand/v2"
	"net"
	"strings"
	"syscall"
	"time"
)

// retryDelay is the wait before retry n (0-based): the backoff doubled n
// times, of which a random part is taken ("equal jitter": between half and
// all of it). Without the jitter, two instances that conflicted on one
// aggregate would retry in step and conflict again.
func retryDelay(base time.Duration, n int) time.Duration {
	d := base << min(n, 20)
	half := d / 2
	if half <= 0 {
		return d
	}
	return half + rand.N(half+1)
}

// IsTransient reports whether err is a store failure that trying again may
// cure and after which a retry is safe: a lost or refused connection, a
// network timeout, a serialization failure or deadlock (SQLSTATE class 40),
// a connection exception (class 08) or a server shutting down (57P0x), a
// busy SQLite database, or any error that says so itself with a
// Transient() or Temporary() method returning true. A context's end is
// not transient: the caller has gone.
//
// A retry after such an error is safe even when the write behind it did
// commit, since the command's request ID makes the store refuse a second
// stream for it.
func IsTransient(err error) bool {
	if err == nil || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return false
	}
	var t interface{ Transient() bool }
	if errors.As(err, &t) {
		return t.Transient()
	}
	var tmp interface{ Temporary() bool }
	if errors.As(err, &tmp) && tmp.Temporary() {
		return true
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return true
	}
	var st interface{ SQLState() string }
	if errors.As(err, &st) {
		code := st.SQLState()
		return strings.HasPrefix(code, "08") || strings.HasPrefix(code, "40") || strings.HasPrefix(code, "57P0")
	}
	var sc interface{ Code() int }
	if errors.As(err, &sc) {
		// SQLite's primary result codes SQLITE_BUSY (5) and SQLITE_LOCKED
		// (6), with their extended codes in the higher bits.
		if c := sc.Code() & 0xff; c == 5 || c == 6 {
			return true
		}
	}
	for _, target := range []error{driver.ErrBadConn, io.ErrUnexpectedEOF, syscall.ECONNRESET, syscall.ECONNREFUSED, syscall.ECONNABORTED, syscall.EPIPE} {
		if errors.Is(err, target) {
			return true
		}
	}
	return false
}
