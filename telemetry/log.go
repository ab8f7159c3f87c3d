package telemetry

import (
	"context"
	"io"
	"log/slog"

	"github.com/factum-go/factum"
	"go.opentelemetry.io/otel/trace"
)

// Log formats NewLogger accepts.
const (
	FormatText = "text"
	FormatJSON = "json"
)

// NewLogger returns a logger writing to w in format (FormatText or
// FormatJSON) at level and above. A record logged with a context inside a
// trace carries trace_id and span_id, so log lines and traces join.
func NewLogger(w io.Writer, format string, level slog.Level) (*slog.Logger, error) {
	opts := &slog.HandlerOptions{Level: level}
	var h slog.Handler
	switch format {
	case FormatText, "":
		h = slog.NewTextHandler(w, opts)
	case FormatJSON:
		h = slog.NewJSONHandler(w, opts)
	default:
		return nil, factum.IllegalArgument("telemetry: log format " + format + " is neither text nor json")
	}
	return slog.New(TraceHandler(h)), nil
}

// ParseLevel parses debug, info, warn or error (any case).
func ParseLevel(s string) (slog.Level, error) {
	var l slog.Level
	if err := l.UnmarshalText([]byte(s)); err != nil {
		return 0, factum.IllegalArgument("telemetry: log level " + s + " is none of debug, info, warn, error")
	}
	return l, nil
}

// TraceHandler returns h adding trace_id and span_id to every record
// logged with a context that holds a valid span, each unless the record
// has it already (the access log adds trace_id itself, for a logger
// without this handler), so that a line names each key once.
func TraceHandler(h slog.Handler) slog.Handler { return traceHandler{h} }

type traceHandler struct{ slog.Handler }

// Handle implements slog.Handler.
func (h traceHandler) Handle(ctx context.Context, r slog.Record) error {
	if sc := trace.SpanContextFromContext(ctx); sc.IsValid() {
		hasTrace, hasSpan := false, false
		r.Attrs(func(a slog.Attr) bool {
			switch a.Key {
			case "trace_id":
				hasTrace = true
			case "span_id":
				hasSpan = true
			}
			return !hasTrace || !hasSpan
		})
		if !hasTrace {
			r.AddAttrs(slog.String("trace_id", sc.TraceID().String()))
		}
		if !hasSpan {
			r.AddAttrs(slog.String("span_id", sc.SpanID().String()))
		}
	}
	return h.Handler.Handle(ctx, r)
}

// WithAttrs implements slog.Handler.
func (h traceHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	return traceHandler{h.Handler.WithAttrs(attrs)}
}

// WithGroup implements slog.Handler.
func (h traceHandler) WithGroup(name string) slog.Handler {
	return traceHandler{h.Handler.WithGroup(name)}
}
