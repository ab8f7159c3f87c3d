package telemetry

import (
	"context"
	"time"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/eventstore"
	"github.com/factum-go/factum/internal/built"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
)

// Store returns next instrumented: the append latency by backend and
// outcome, the events per appended stream, and a client span per call
// made inside a recorded trace (a call without a span in its context,
// such as a consumer's log poll, starts none). Inside a command's
// processing the calls are spans at SpansDetailed only; at the
// per-command level the processor's span has them as events.
//
// The decorator passes the aggregate executor's streams on as the
// executor's (built.Appender) to a store that takes them so, which then
// skips the checks that cannot fail for them, as it does undecorated; and
// it passes the executor's groups of streams (built.GroupAppender) on to a
// store that appends groups, measuring a group as one append (its latency
// once, the events of each of its streams) under one span.
func (t *Telemetry) Store(next eventstore.Store) eventstore.Store {
	return &store{t: t, next: next, built: built.Of(next), group: built.GroupOf(next), system: attribute.String("db.system.name", t.backend)}
}

type store struct {
	t    *Telemetry
	next eventstore.Store
	// built is next when it appends the executor's streams itself.
	built built.Appender
	// group is next when it appends groups of them too.
	group  built.GroupAppender
	system attribute.KeyValue
}

var _ built.GroupAppender = (*store)(nil)

// errNoGroups is the failure of a group appended to a decorator whose
// store does not append groups.
var errNoGroups = factum.NewError(factum.CodeInternalServerError, "telemetry: the decorated event store does not append groups")

// start begins a span for op when ctx is inside a recorded trace (a
// child of an unrecorded span would not be recorded either) and, at the
// per-command level, outside a command's processing (inCommand).
// The span name is "factum.store " and op, written out by each caller so
// that no call concatenates it.
func (s *store) start(ctx context.Context, name, op string, st *factum.EventStream) (context.Context, trace.Span) {
	// A command's processing is the common case under tracing: it is
	// told before the span's IsRecording, which takes the span's lock.
	if !s.t.tracing || !s.t.detailed && inCommand(ctx) || !trace.SpanFromContext(ctx).IsRecording() {
		return ctx, nil
	}
	ctx, span := s.t.tracer.Start(ctx, name, clientKind...)
	b := getAttrs()
	kv := append(b.kv[:0], s.system, attribute.String("db.operation.name", op))
	if st != nil {
		kv = append(kv, AttrAggregateVersion.Int(st.Version), AttrEvents.Int(len(st.Events)))
	}
	span.SetAttributes(kv...)
	putAttrs(b)
	return ctx, span
}

func end(span trace.Span, err error) {
	if span == nil {
		return
	}
	if err != nil {
		span.RecordError(err)
		span.SetStatus(codes.Error, errLabel(err))
	}
	span.End()
}

// Append implements eventstore.Store.
func (s *store) Append(ctx context.Context, st *factum.EventStream) error {
	return s.append(ctx, st, built.Stream{}, false)
}

// AppendBuilt implements built.Appender: the executor's stream goes to
// next as the executor's when next takes it so, and through its Append
// otherwise.
func (s *store) AppendBuilt(ctx context.Context, b built.Stream) error {
	st := b.Stream()
	if st == nil {
		return s.append(ctx, st, built.Stream{}, false)
	}
	if s.built == nil {
		b = built.Stream{}
	}
	return s.append(ctx, st, b, true)
}

// BuiltOwner implements built.Appender.
func (s *store) BuiltOwner() built.Owner { return built.OwnedBy(s) }

// append instruments one append of st: through next's AppendBuilt when b
// holds it, else through next's Append. A stream the executor built
// (fresh) has its create time read from the clock as the executor's last
// step before the append (aggregate's build), which stands for the
// append's start.
func (s *store) append(ctx context.Context, st *factum.EventStream, b built.Stream, fresh bool) error {
	var start time.Duration
	if s.t.m != nil {
		if fresh {
			start = st.CreateTime.Sub(s.t.epoch)
		} else {
			start = s.t.clock()
		}
	}
	sctx, span := s.start(ctx, "factum.store Append", "Append", st)
	var err error
	if b.Stream() != nil {
		err = s.built.AppendBuilt(sctx, b)
	} else {
		err = s.next.Append(sctx, st)
	}
	end(span, err)
	if s.t.m != nil {
		seconds := s.t.since(start)
		if err == nil {
			s.t.m.appendOk.Observe(seconds)
			s.t.m.appendSize.Observe(float64(len(st.Events)))
		} else {
			s.t.m.appendSeconds.WithLabelValues(s.t.backend, errLabel(err)).Observe(seconds)
		}
	}
	return err
}

// AppendsGroups implements built.GroupAppender: the decorator serves
// groups when the store it decorates does.
func (s *store) AppendsGroups() bool { return s.group != nil }

// AppendBuiltGroup implements built.GroupAppender: the group goes to the
// decorated store as one append, measured as one.
func (s *store) AppendBuiltGroup(ctx context.Context, ss []built.Stream) error {
	if s.group == nil {
		return errNoGroups
	}
	var start time.Duration
	if s.t.m != nil {
		start = s.t.clock()
	}
	sctx, span := s.start(ctx, "factum.store AppendGroup", "AppendGroup", nil)
	if span != nil {
		span.SetAttributes(attribute.Int("factum.streams", len(ss)))
	}
	err := s.group.AppendBuiltGroup(sctx, ss)
	end(span, err)
	if s.t.m != nil {
		seconds := s.t.since(start)
		if err == nil {
			s.t.m.appendOk.Observe(seconds)
			for _, b := range ss {
				if st := b.Stream(); st != nil {
					s.t.m.appendSize.Observe(float64(len(st.Events)))
				}
			}
		} else {
			s.t.m.appendSeconds.WithLabelValues(s.t.backend, errLabel(err)).Observe(seconds)
		}
	}
	return err
}

// Load implements eventstore.Store.
func (s *store) Load(ctx context.Context, id factum.AggregateID, from, to int) ([]factum.EventStream, error) {
	ctx, span := s.start(ctx, "factum.store Load", "Load", nil)
	out, err := s.next.Load(ctx, id, from, to)
	if span != nil {
		span.SetAttributes(attribute.Int("factum.streams", len(out)))
	}
	end(span, err)
	return out, err
}

// LoadByTime implements eventstore.Store.
func (s *store) LoadByTime(ctx context.Context, id factum.AggregateID, from, to time.Time) ([]factum.EventStream, error) {
	ctx, span := s.start(ctx, "factum.store LoadByTime", "LoadByTime", nil)
	out, err := s.next.LoadByTime(ctx, id, from, to)
	end(span, err)
	return out, err
}

// RequestExists implements eventstore.Store.
func (s *store) RequestExists(ctx context.Context, id factum.AggregateID, requestID string) (bool, error) {
	ctx, span := s.start(ctx, "factum.store RequestExists", "RequestExists", nil)
	ok, err := s.next.RequestExists(ctx, id, requestID)
	end(span, err)
	return ok, err
}

// Lookup implements eventstore.Store.
func (s *store) Lookup(ctx context.Context, id factum.AggregateID, requestID string) (factum.EventStream, error) {
	ctx, span := s.start(ctx, "factum.store Lookup", "Lookup", nil)
	out, err := s.next.Lookup(ctx, id, requestID)
	end(span, err)
	return out, err
}

// ScanAggregateIDs implements eventstore.Store.
func (s *store) ScanAggregateIDs(ctx context.Context, named factum.NamedAggregate, afterID string, limit int) ([]factum.AggregateID, error) {
	ctx, span := s.start(ctx, "factum.store ScanAggregateIDs", "ScanAggregateIDs", nil)
	out, err := s.next.ScanAggregateIDs(ctx, named, afterID, limit)
	end(span, err)
	return out, err
}

// ReadLog implements eventstore.Store.
func (s *store) ReadLog(ctx context.Context, after factum.Position, limit int) ([]factum.EventStream, error) {
	ctx, span := s.start(ctx, "factum.store ReadLog", "ReadLog", nil)
	out, err := s.next.ReadLog(ctx, after, limit)
	end(span, err)
	return out, err
}

// WaitLog implements eventstore.Store; it blocks, so it has no span.
func (s *store) WaitLog(ctx context.Context, after factum.Position) error {
	return s.next.WaitLog(ctx, after)
}
