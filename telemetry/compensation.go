package telemetry

import (
	"context"
	"errors"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/compensation"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
)

// Attribute keys of a compensation attempt's span.
const (
	AttrExecutionID = attribute.Key("factum.compensation.execution.id")
	AttrOutcome     = attribute.Key("factum.compensation.outcome")
	AttrForced      = attribute.Key("factum.compensation.forced")
	AttrEventID     = attribute.Key("factum.event.id")
)

// Compensation returns the observer of compensation attempts, for
// compensation.Config's Attempts: a span per retry of an execution,
// "factum.compensate <function>" (its prepare, the stream's load and the
// outcome's recording are its children), with the execution, the failed
// event, the attempt number and the outcome, marked with the error when
// the function failed again or the retry itself failed; and the attempts
// counted by function and outcome. A retry skipped because another
// scheduler took the execution is no error.
func (t *Telemetry) Compensation() compensation.AttemptObserver { return attempts{t} }

type attempts struct{ t *Telemetry }

// attemptKey marks the context of an attempt with its state, so that
// EndAttempt ends only a span StartAttempt started.
type attemptKey struct{}

// attempt is one attempt's function and span (nil when not traced).
type attempt struct {
	fn   string
	span trace.Span
}

// StartAttempt implements compensation.AttemptObserver.
func (a attempts) StartAttempt(ctx context.Context, it compensation.Item, force bool) context.Context {
	if a.t.m == nil && !a.t.traces(ctx) {
		return ctx
	}
	exec := &it.Execution
	st := &attempt{fn: exec.Function.String()}
	if a.t.traces(ctx) {
		var span trace.Span
		ctx, span = a.t.tracer.Start(ctx, "factum.compensate "+st.fn, internalKind...)
		if span.IsRecording() {
			span.SetAttributes(
				AttrExecutionID.String(it.ID.ID), AttrFunction.String(st.fn), AttrForced.Bool(force),
				AttrAggregate.String(exec.Aggregate.NamedAggregate.String()), AttrAggregateID.String(exec.Aggregate.ID),
				AttrAggregateVersion.Int(exec.Version), AttrEventID.String(exec.EventID),
			)
		}
		st.span = span
	}
	return context.WithValue(ctx, attemptKey{}, st)
}

// EndAttempt implements compensation.AttemptObserver.
func (a attempts) EndAttempt(ctx context.Context, at compensation.Attempt, err error) {
	st, ok := ctx.Value(attemptKey{}).(*attempt)
	if !ok {
		return
	}
	outcome := string(at.Outcome)
	if err != nil && at.Outcome != compensation.OutcomeSkipped {
		outcome = errLabel(err) // the function ran; its outcome is not recorded
	}
	// Another scheduler's win, or an execution no longer due, is no error.
	lost := at.Outcome == compensation.OutcomeSkipped &&
		(errors.Is(err, factum.ErrCommandExpectVersionConflict) || errors.Is(err, factum.ErrIllegalState))
	if span := st.span; span != nil {
		if span.IsRecording() {
			span.SetAttributes(AttrOutcome.String(outcome), AttrAttempt.Int(at.Attempt))
			switch {
			case at.Outcome == compensation.OutcomeFailed && at.Error != nil:
				span.RecordError(at.Error)
				span.SetStatus(codes.Error, at.Error.Error())
			case err != nil && !lost:
				span.RecordError(err)
				span.SetStatus(codes.Error, err.Error())
			}
		}
		span.End()
	}
	if a.t.m != nil {
		a.t.m.compensationAttempts.WithLabelValues(st.fn, outcome).Inc()
	}
}
