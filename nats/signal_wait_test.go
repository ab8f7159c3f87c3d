package nats

import (
	"context"
	"fmt"
	"maps"
	"testing"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/command"
)

// Signals publishes to another instance only the signals the wait there
// can use (command.WaitUses of the signal's OriginWait): a wait for
// PROCESSED gets PROCESSED and no branch stage, one for SENT nothing, one
// for a branch stage and one of no known stage (older instances, outside
// producers) everything. What it leaves out it counts as Unwaited. The
// signals of this instance's own commands stay local, whatever their
// wait. One by one or as a batch, the same signals arrive, in order.
func TestSignalsLeaveOutWhatTheWaitCannotUse(t *testing.T) {
	url := startServer(t).ClientURL()
	prefix := "t" + factum.NewID()[:8] + ".signal"
	a, recA := newSignals(t, url, prefix, "a")
	_, recB := newSignals(t, url, prefix, "b")
	stages := []factum.CommandStage{factum.StageProcessed, factum.StageSnapshot, factum.StageProjected, factum.StageEventHandled, factum.StageSagaHandled}
	waits := []factum.CommandStage{0, factum.StageSent, factum.StageProcessed, factum.StageProjected, factum.StageSagaHandled}
	var sigs, want []factum.Signal
	for _, wait := range waits {
		for _, stage := range stages {
			sig := factum.Signal{Stage: stage, CommandID: fmt.Sprintf("%v-%v", wait, stage), Origin: "b", OriginWait: wait}
			sigs = append(sigs, sig)
			if wait == 0 || wait.IsBranch() || wait == factum.StageProcessed && stage == factum.StageProcessed {
				want = append(want, sig)
			}
		}
	}
	// The last signal, wanted by any wait, tells that the ones before
	// it arrived: one connection's messages arrive in order.
	marker := factum.Signal{Stage: factum.StageProcessed, CommandID: "marker", Origin: "b", OriginWait: factum.StageProcessed}
	for _, batch := range []bool{false, true} {
		t.Run(fmt.Sprintf("batch=%v", batch), func(t *testing.T) {
			before, received := a.Stats(), len(recB.all())
			if batch {
				a.SignalOriginBatch("b", append(sigs, marker))
			} else {
				for _, sig := range append(sigs, marker) {
					a.Signal(sig)
				}
			}
			got := recB.await(t, received+len(want)+1)[received:]
			var ids, wantIDs []string
			for _, s := range got {
				ids = append(ids, s.CommandID)
			}
			for _, s := range append(want, marker) {
				wantIDs = append(wantIDs, s.CommandID)
			}
			if fmt.Sprint(ids) != fmt.Sprint(wantIDs) {
				t.Fatalf("b received %v, want %v", ids, wantIDs)
			}
			after := a.Stats()
			if n := after.Unwaited - before.Unwaited; n != uint64(len(sigs)-len(want)) {
				t.Errorf("a counted %d unwaited, want %d", n, len(sigs)-len(want))
			}
			if n := after.Sent - before.Sent; n != uint64(len(want)+1) {
				t.Errorf("a counted %d sent, want %d", n, len(want)+1)
			}
		})
	}
	// Local signals are untouched.
	received := len(recA.all())
	for _, stage := range stages {
		a.Signal(factum.Signal{Stage: stage, CommandID: "own-" + stage.String(), Origin: "a", OriginWait: factum.StageSent})
	}
	if got := recA.await(t, received+len(stages)); len(got) != received+len(stages) {
		t.Fatalf("a delivered %d of its own signals, want %d", len(got)-received, len(stages))
	}
}

// The bus wrapper stamps every command with the stage its send's context
// names for it (command.WithWaitStage) in factum.OriginWaitHeader, and
// deletes the header from every other: a caller's value, one a saga's
// command inherited from its source stream, and one for a context that
// names another command's wait are never kept. A header holding nothing
// else is the shared map of its stage; the caller's map is never
// written.
func TestSignalsBusStampsTheWait(t *testing.T) {
	inherited := map[string]string{factum.OriginHeader: "b", factum.OriginWaitHeader: "SAGA_HANDLED", "traceparent": "t"}
	callerSet := map[string]string{factum.OriginWaitHeader: "PROCESSED"}
	for _, tc := range []struct {
		name   string
		header map[string]string
		ctx    func(id string) context.Context
		want   map[string]string
		shared bool
	}{
		{"none, no wait", nil, noWait, map[string]string{factum.OriginHeader: "a"}, true},
		{"none, waiting", nil, waiting(factum.StageProjected), map[string]string{factum.OriginHeader: "a", factum.OriginWaitHeader: "PROJECTED"}, true},
		{"a saga's, no wait", inherited, noWait, map[string]string{factum.OriginHeader: "a", "traceparent": "t"}, false},
		{"a saga's, waiting", inherited, waiting(factum.StageProcessed), map[string]string{factum.OriginHeader: "a", factum.OriginWaitHeader: "PROCESSED", "traceparent": "t"}, false},
		{"a saga's, another's wait", inherited, otherWait, map[string]string{factum.OriginHeader: "a", "traceparent": "t"}, false},
		{"caller-set, waiting", callerSet, waiting(factum.StageSagaHandled), map[string]string{factum.OriginHeader: "a", factum.OriginWaitHeader: "SAGA_HANDLED"}, true},
		{"caller-set, no wait", callerSet, noWait, map[string]string{factum.OriginHeader: "a"}, true},
		{"caller-set, SENT", callerSet, waiting(factum.StageSent), map[string]string{factum.OriginHeader: "a", factum.OriginWaitHeader: "SENT"}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got *factum.Command
			only := newOriginHeaders("a")
			ob := originBus{next: recordingBus(func(cmd *factum.Command) { got = cmd }), instance: "a", only: only}
			before := maps.Clone(tc.header)
			cmd := &factum.Command{ID: "c-1", Header: tc.header}
			if err := ob.Send(tc.ctx(cmd.ID), cmd); err != nil {
				t.Fatal(err)
			}
			if !maps.Equal(got.Header, tc.want) {
				t.Fatalf("sent header %v, want %v", got.Header, tc.want)
			}
			if !maps.Equal(tc.header, before) {
				t.Fatalf("the caller's header became %v", tc.header)
			}
			if shared := sameMap(got.Header, only[factum.OriginWait(tc.want)]); shared != tc.shared {
				t.Fatalf("the header is the shared map: %v, want %v", shared, tc.shared)
			}
		})
	}
}

func noWait(string) context.Context { return context.Background() }

func otherWait(string) context.Context {
	return command.WithWaitStage(context.Background(), "another", factum.StageProcessed)
}

func waiting(stage factum.CommandStage) func(id string) context.Context {
	return func(id string) context.Context { return command.WithWaitStage(context.Background(), id, stage) }
}
