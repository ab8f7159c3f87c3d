package telemetry

import (
	"context"
	"maps"
	"reflect"
	"sync/atomic"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/aggregate"
	"github.com/prometheus/client_golang/prometheus"
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

// typeObs is the observer of one aggregate type's commands that no span
// records (metrics only, or tracing that does not reach the command): it
// counts the state cache's hits and misses and the retries into the
// type's series as the executor reports them, keeping nothing per
// command. It is no PhaseObserver, so the executor makes no phase calls
// for it.
type typeObs struct {
	hits, misses, retries prometheus.Counter
	// last is the context that carried the observer last: commands run
	// in the same parent context (a dispatcher's) share it, which spares
	// each an allocation. It holds nothing of a command, only the parent
	// and the observer, so a context kept past its command stays right.
	last atomic.Pointer[aggregate.ObservedContext]
}

var _ aggregate.RetryObserver = (*typeObs)(nil)

// ObserveCache implements aggregate.CacheObserver.
func (o *typeObs) ObserveCache(hit bool) {
	if hit {
		o.hits.Inc()
	} else {
		o.misses.Inc()
	}
}

// ObserveRetry implements aggregate.RetryObserver.
func (o *typeObs) ObserveRetry(int) { o.retries.Inc() }

// context returns parent carrying o: the context made for the previous
// command when its parent was the same.
func (o *typeObs) context(parent context.Context) context.Context {
	if c := o.last.Load(); c != nil && sameContext(c.Context, parent) {
		return c
	}
	c := &aggregate.ObservedContext{Context: parent, Observer: o}
	o.last.Store(c)
	return c
}

// sameContext reports whether a and b are the same context. Contexts are
// pointers as a rule, and pointers compare without a panic; a context of
// any other kind is never the same: a struct type can be comparable and
// still panic when compared (an interface field holding a map, say).
func sameContext(a, b context.Context) bool {
	t := reflect.TypeOf(a)
	return t != nil && t.Kind() == reflect.Pointer && a == b
}

// cmdObs observes one command's processing inside a trace: it counts as
// typeObs does (into its type's series, when metrics are on) and, when
// the command's span records, marks each step of the processing on it:
// an event at the per-command level, a child span at the detailed one.
// It travels in the context as the executor's aggregate.CacheObserver
// (and RetryObserver, PhaseObserver and HeaderWriter).
type cmdObs struct {
	// ctx is the command's context carrying the observer, in the
	// observer's allocation.
	ctx aggregate.ObservedContext
	// typ is the middleware of the command's type: its Telemetry, names
	// and, when metrics are on, observer.
	typ     *commandType
	retries atomic.Int32
	// span is the command's span when it records, else nil.
	span trace.Span
}

var _ aggregate.HeaderWriter = (*cmdObs)(nil)

// StreamHeader implements aggregate.HeaderWriter: the stream's header is
// the command's with the span context of the command's span (in ctx, the
// attempt's context) written in.
func (c *cmdObs) StreamHeader(ctx context.Context, command map[string]string) map[string]string {
	h := make(map[string]string, len(command)+2)
	maps.Copy(h, command)
	c.typ.t.inject(ctx, h)
	return h
}

// ObserveCache implements aggregate.CacheObserver.
func (c *cmdObs) ObserveCache(hit bool) {
	if o := c.typ.obs; o != nil {
		o.ObserveCache(hit)
	}
}

// ObserveRetry implements aggregate.RetryObserver: a factum.retry event
// with the attempt's number on the command's span.
func (c *cmdObs) ObserveRetry(attempt int) {
	c.retries.Add(1)
	if o := c.typ.obs; o != nil {
		o.ObserveRetry(attempt)
	}
	if c.span != nil {
		c.span.AddEvent("factum.retry", trace.WithAttributes(AttrAttempt.Int(attempt)))
	}
}

// StartPhase implements aggregate.PhaseObserver: at the detailed level a
// child span for each step but the append, which the Store decorator's
// span covers.
func (c *cmdObs) StartPhase(ctx context.Context, p aggregate.Phase) context.Context {
	if c.span == nil || !c.typ.t.detailed || p == aggregate.PhaseAppend || int(p) >= len(c.typ.names.phase) {
		return ctx
	}
	ctx, _ = c.typ.t.tracer.Start(ctx, c.typ.names.phase[p], internalKind...)
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
	if !c.typ.t.detailed {
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

// inCommand reports whether ctx is inside a command's processing that
// the Commands middleware observes.
func inCommand(ctx context.Context) bool {
	switch aggregate.CacheObserverFrom(ctx).(type) {
	case *cmdObs, *typeObs:
		return true
	}
	return false
}
