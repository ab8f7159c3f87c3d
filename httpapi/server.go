package httpapi

import (
	"net/http"
	"time"
)

// Defaults of ServerConfig, chosen so that an idle or slow connection
// cannot be held open for long and a command may still wait the longest
// wait a caller may ask for (DefaultMaxWaitTimeout).
const (
	// DefaultReadHeaderTimeout bounds reading a request's headers, and
	// how long a new connection may stay silent.
	DefaultReadHeaderTimeout = 5 * time.Second
	// DefaultReadTimeout bounds reading a whole request, body included.
	DefaultReadTimeout = 30 * time.Second
	// DefaultWriteTimeout bounds writing a response of a read route; the
	// command routes extend it to their wait cap plus 10 s, and event
	// streams are bounded by StreamLimits instead.
	DefaultWriteTimeout = 30 * time.Second
	// DefaultIdleTimeout closes a keep-alive connection idle this long.
	DefaultIdleTimeout = 60 * time.Second
	// DefaultMaxHeaderBytes bounds request headers.
	DefaultMaxHeaderBytes = 64 << 10
	// DefaultMaxConns caps the open connections of a ConnLimiter.
	DefaultMaxConns = 4096
)

// ServerConfig sets the timeouts of an http.Server; zero fields take the
// defaults above.
type ServerConfig struct {
	ReadHeaderTimeout, ReadTimeout, WriteTimeout, IdleTimeout time.Duration
	MaxHeaderBytes                                            int
	// Limiter, if set, tracks the server's connection states, so that at
	// its cap it closes idle connections rather than refuse new ones;
	// serve on its Listen'd listener.
	Limiter *ConnLimiter
}

// NewServer returns an http.Server for h with cfg's timeouts: no
// connection stays open silent, half-sent or idle for longer than they
// say.
func NewServer(h http.Handler, cfg ServerConfig) *http.Server {
	or := func(d, def time.Duration) time.Duration {
		if d <= 0 {
			return def
		}
		return d
	}
	s := &http.Server{
		Handler:           h,
		ReadHeaderTimeout: or(cfg.ReadHeaderTimeout, DefaultReadHeaderTimeout),
		ReadTimeout:       or(cfg.ReadTimeout, DefaultReadTimeout),
		WriteTimeout:      or(cfg.WriteTimeout, DefaultWriteTimeout),
		IdleTimeout:       or(cfg.IdleTimeout, DefaultIdleTimeout),
		MaxHeaderBytes:    cfg.MaxHeaderBytes,
	}
	if s.MaxHeaderBytes <= 0 {
		s.MaxHeaderBytes = DefaultMaxHeaderBytes
	}
	if cfg.Limiter != nil {
		s.ConnState = cfg.Limiter.ConnState
	}
	return s
}
