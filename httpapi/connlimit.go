package httpapi

import (
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"
)

// ConnLimiter caps the open connections of a server, so a flood of
// connections cannot exhaust the process's file descriptors. At the cap a
// new connection takes the place of the oldest one that is not in a
// request (new, never having sent one, or idle between requests); when
// every connection is in a request, the new one is closed at once. Idle
// connections therefore cannot lock out a client that has something to
// ask, such as a health check.
//
// Wrap the listener with Listen and set ConnState as the server's
// ConnState hook (ServerConfig.Limiter does); TLS may be layered on the
// limited listener.
type ConnLimiter struct {
	max     int
	mu      sync.Mutex
	open    map[*limitedConn]struct{}
	peak    int
	evicted atomic.Int64
	refused atomic.Int64
}

// ConnStats counts what a ConnLimiter did.
type ConnStats struct {
	// Open is the number of connections open now; Peak the most at once.
	Open, Peak int
	// Evicted counts connections closed to make room; Refused new
	// connections closed because all were in a request.
	Evicted, Refused int64
}

// NewConnLimiter returns a limiter of max connections; max <= 0 means
// DefaultMaxConns.
func NewConnLimiter(max int) *ConnLimiter {
	if max <= 0 {
		max = DefaultMaxConns
	}
	return &ConnLimiter{max: max, open: map[*limitedConn]struct{}{}}
}

// Max returns the cap.
func (l *ConnLimiter) Max() int { return l.max }

// Stats returns the counts.
func (l *ConnLimiter) Stats() ConnStats {
	l.mu.Lock()
	defer l.mu.Unlock()
	return ConnStats{Open: len(l.open), Peak: l.peak, Evicted: l.evicted.Load(), Refused: l.refused.Load()}
}

// Listen returns inner limited by l.
func (l *ConnLimiter) Listen(inner net.Listener) net.Listener {
	return &limitedListener{Listener: inner, l: l}
}

// ConnState records the server's view of a connection; it is the
// http.Server.ConnState hook.
func (l *ConnLimiter) ConnState(c net.Conn, s http.ConnState) {
	lc := unwrapLimited(c)
	if lc == nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	lc.state = s
	lc.since = time.Now()
}

// unwrapLimited finds the limited connection under c (a *tls.Conn wraps
// it).
func unwrapLimited(c net.Conn) *limitedConn {
	for range 4 {
		switch v := c.(type) {
		case *limitedConn:
			return v
		case interface{ NetConn() net.Conn }:
			c = v.NetConn()
		default:
			return nil
		}
	}
	return nil
}

// admit adds c, making room if it must; false means c is refused.
func (l *ConnLimiter) admit(c *limitedConn) bool {
	var victim *limitedConn
	l.mu.Lock()
	if len(l.open) >= l.max {
		for o := range l.open {
			if (o.state == http.StateNew || o.state == http.StateIdle) && (victim == nil || o.since.Before(victim.since)) {
				victim = o
			}
		}
		if victim == nil {
			l.mu.Unlock()
			l.refused.Add(1)
			return false
		}
		delete(l.open, victim)
		victim.counted = false
	}
	c.counted = true
	l.open[c] = struct{}{}
	l.peak = max(l.peak, len(l.open))
	l.mu.Unlock()
	if victim != nil {
		l.evicted.Add(1)
		_ = victim.Conn.Close()
	}
	return true
}

func (l *ConnLimiter) release(c *limitedConn) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if c.counted {
		delete(l.open, c)
		c.counted = false
	}
}

type limitedListener struct {
	net.Listener
	l *ConnLimiter
}

// Accept returns the next admitted connection; refused ones are closed
// without a word (a request cannot be answered without a slot to read
// it in).
func (ll *limitedListener) Accept() (net.Conn, error) {
	for {
		c, err := ll.Listener.Accept()
		if err != nil {
			return nil, err
		}
		lc := &limitedConn{Conn: c, l: ll.l, state: http.StateNew, since: time.Now()}
		if ll.l.admit(lc) {
			return lc, nil
		}
		_ = c.Close()
	}
}

// limitedConn is an admitted connection; its state and since are guarded
// by the limiter's mutex.
type limitedConn struct {
	net.Conn
	l       *ConnLimiter
	state   http.ConnState
	since   time.Time
	counted bool
	once    sync.Once
}

func (c *limitedConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(func() { c.l.release(c) })
	return err
}
