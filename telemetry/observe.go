package telemetry

import (
	"context"
	"maps"
	"sync/atomic"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/aggregate"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
)

// Event names of the per-command level: each marks the end of a step of
// the processing on the processor's span. A step whose end tells nothing
// the span does not has none: a decision or an append that succeeded
// (the span's end, its code and its version mark them); a state-cache
// miss's load, bound effects and every failed step have theirs.
var phaseEvents = [aggregate.PhaseAppend + 1]string{
	aggregate.PhaseLoad:    "factum.load",
	aggregate.PhaseDecide:  "factum.decide",
	aggregate.PhaseEffects: "factum.effects",
	aggregate.PhaseAppend:  "factum.append",
}

// cmdCounts counts one command's appends (the retries after a version
// conflict are the appends past the first) and the state cache's hits
// and misses. It travels in the context as the executor's
// aggregate.CacheObserver, where the Store decorator finds it too: one
// context value a command. Alone it is the observer of a command no span
// records (metrics only, or tracing that does not reach the command): it
// is no PhaseObserver, so the executor makes no phase calls for it, and
// it fits a smaller allocation than cmdObs.
type cmdCounts struct {
	// ctx is the command's context carrying the observer, in the
	// observer's allocation.
	ctx aggregate.ObservedContext
	// t is the Telemetry whose middleware made the counts: only its own
	// Store decorator records appended, a reading of the same clock (each
	// Telemetry's clock has its own epoch).
	t                     *Telemetry
	appends, hits, misses atomic.Int32
	// appended is the clock reading at the end of the append that
	// succeeded, 0 before one has: the end of a successful command's
	// processing latency, which spares the middleware a reading of its
	// own (what follows the append is the state cache's update).
	appended atomic.Int64
}

// ObserveCache implements aggregate.CacheObserver.
func (c *cmdCounts) ObserveCache(hit bool) {
	if hit {
		c.hits.Add(1)
	} else {
		c.misses.Add(1)
	}
}

// cmdObs observes one command's processing inside a trace: it counts as
// cmdCounts does and, when the command's span records, marks each step
// of the processing on it: an event at the per-command level, a child
// span at the detailed one. It travels in the context as the executor's
// aggregate.CacheObserver (and PhaseObserver and HeaderWriter).
type cmdObs struct {
	cmdCounts
	attempts atomic.Int32
	// span is the command's span when it records, else nil.
	span     trace.Span
	names    *typeNames
	detailed bool
	// header: the command's span context is valid, and each stream's
	// header carries it.
	header bool
}

var _ aggregate.HeaderWriter = (*cmdObs)(nil)

// StreamHeader implements aggregate.HeaderWriter: the stream's header is
// the command's with the span context of the command's span (in ctx, the
// attempt's context) written in, when that context is valid.
func (c *cmdObs) StreamHeader(ctx context.Context, command map[string]string) map[string]string {
	if !c.header {
		return nil
	}
	h := make(map[string]string, len(command)+2)
	maps.Copy(h, command)
	c.t.inject(ctx, h)
	return h
}

// ObserveCache implements aggregate.CacheObserver: each attempt makes one
// lookup, so the lookups past the first are the retries.
func (c *cmdObs) ObserveCache(hit bool) {
	c.cmdCounts.ObserveCache(hit)
	if n := c.attempts.Add(1); n > 1 && c.span != nil {
		c.span.AddEvent("factum.retry", trace.WithAttributes(AttrAttempt.Int(int(n))))
	}
}

// StartPhase implements aggregate.PhaseObserver: at the detailed level a
// child span for each step but the append, which the Store decorator's
// span covers.
func (c *cmdObs) StartPhase(ctx context.Context, p aggregate.Phase) context.Context {
	if c.span == nil || !c.detailed || p == aggregate.PhaseAppend || int(p) >= len(c.names.phase) {
		return ctx
	}
	ctx, _ = c.t.tracer.Start(ctx, c.names.phase[p], internalKind...)
	return ctx
}

// EndPhase implements aggregate.PhaseObserver: it ends the step's span
// (detailed) or adds the step's event (per-command), with the error's
// code when it failed; a version conflict on an append is an event at
// the detailed level too.
func (c *cmdObs) EndPhase(ctx context.Context, p aggregate.Phase, err error) {
	if c.span == nil || int(p) >= len(phaseEvents) {
		return
	}
	if !c.detailed {
		if err == nil {
			// Each event costs the SDK a clock reading and two
			// allocations (the span's event and the copy its end hands
			// the exporter): a decision and an append that succeed are
			// the common path, which the span itself describes.
			if p == aggregate.PhaseLoad || p == aggregate.PhaseEffects {
				c.span.AddEvent(phaseEvents[p])
			}
			return
		}
		c.span.AddEvent(phaseEvents[p], trace.WithAttributes(AttrCode.String(errLabel(err))))
		return
	}
	if p == aggregate.PhaseAppend {
		if code := factum.CodeOf(err); err != nil && conflict(code) {
			c.span.AddEvent("factum.append.conflict", trace.WithAttributes(AttrCode.String(string(code))))
		}
		return
	}
	span := trace.SpanFromContext(ctx)
	if span == c.span {
		return // no span of its own was started
	}
	if err != nil {
		span.SetStatus(codes.Error, errLabel(err))
	}
	span.End()
}

// cmdCountsFrom returns the counts of the command whose processing ctx
// is in, or nil outside a command's processing.
func cmdCountsFrom(ctx context.Context) *cmdCounts {
	switch o := aggregate.CacheObserverFrom(ctx).(type) {
	case *cmdCounts:
		return o
	case *cmdObs:
		return &o.cmdCounts
	}
	return nil
}
