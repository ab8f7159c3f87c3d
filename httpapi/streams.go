package httpapi

import (
	"context"
	"net/http"
	"sync"
	"time"

	"github.com/factum-go/factum"
)

// Defaults of StreamLimits.
const (
	// DefaultMaxStreams caps concurrent Server-Sent Event streams.
	DefaultMaxStreams = 1000
	// DefaultStreamIdleTimeout ends a stream that wrote nothing for this
	// long.
	DefaultStreamIdleTimeout = time.Minute
)

// StreamLimits bounds Server-Sent Event streams (commands sent with
// Accept: text/event-stream), which a server's write timeout does not
// cover: at most MaxStreams at once (more is 429 TooManyRequests with
// Retry-After), and each ends when it has written nothing for IdleTimeout.
type StreamLimits struct {
	// MaxStreams caps concurrent streams; 0 means DefaultMaxStreams.
	MaxStreams int
	// IdleTimeout ends a silent stream; 0 means DefaultStreamIdleTimeout.
	IdleTimeout time.Duration
}

// streamGate admits streams under the cap and ends idle ones.
type streamGate struct {
	slots chan struct{}
	idle  time.Duration
}

func newStreamGate(cfg StreamLimits) *streamGate {
	if cfg.MaxStreams <= 0 {
		cfg.MaxStreams = DefaultMaxStreams
	}
	if cfg.IdleTimeout <= 0 {
		cfg.IdleTimeout = DefaultStreamIdleTimeout
	}
	return &streamGate{slots: make(chan struct{}, cfg.MaxStreams), idle: cfg.IdleTimeout}
}

// serve runs next for the stream request r if a slot is free.
func (g *streamGate) serve(w http.ResponseWriter, r *http.Request, next http.Handler) {
	select {
	case g.slots <- struct{}{}:
		defer func() { <-g.slots }()
	default:
		w.Header().Set("Retry-After", "1")
		writeError(w, factum.NewError(factum.CodeTooManyRequests, "too many event streams: retry later"))
		return
	}
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	iw := &idleWriter{ResponseWriter: w, idle: g.idle}
	iw.timer = time.AfterFunc(g.idle, cancel)
	defer iw.stop()
	next.ServeHTTP(iw, r.WithContext(ctx))
}

// idleWriter restarts the idle timer on every write; when the timer
// fires, the request's context is cancelled and the stream ends.
type idleWriter struct {
	http.ResponseWriter
	idle  time.Duration
	mu    sync.Mutex
	timer *time.Timer
}

func (w *idleWriter) Write(b []byte) (int, error) {
	w.mu.Lock()
	w.timer.Reset(w.idle)
	w.mu.Unlock()
	return w.ResponseWriter.Write(b)
}

func (w *idleWriter) stop() {
	w.mu.Lock()
	w.timer.Stop()
	w.mu.Unlock()
}

// Unwrap lets http.ResponseController reach the connection (flush,
// deadlines).
func (w *idleWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
