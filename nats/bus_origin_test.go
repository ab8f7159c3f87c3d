package nats

import (
	"context"
	"maps"
	"testing"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/command"
)

// The bus stamps its origin into every command's header: a command without
// a header gets the bus's one shared map, a command with one gets a copy
// with the origin added, and the sender's map stays as it was.
func TestSetOriginSharesOneMapAndNeverWritesTheSendersHeader(t *testing.T) {
	b := &Bus{originOnly: map[string]string{HeaderOrigin: "a"}}
	for _, tc := range []struct {
		name   string
		header map[string]string
		want   map[string]string
		shared bool
	}{
		{"none", nil, map[string]string{HeaderOrigin: "a"}, true},
		{"empty", map[string]string{}, map[string]string{HeaderOrigin: "a"}, true},
		{"trace", map[string]string{"traceparent": "t"}, map[string]string{"traceparent": "t", HeaderOrigin: "a"}, false},
		{"other origin", map[string]string{HeaderOrigin: "b"}, map[string]string{HeaderOrigin: "a"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var before map[string]string
			if tc.header != nil {
				before = map[string]string{}
				for k, v := range tc.header {
					before[k] = v
				}
			}
			cmd := &factum.Command{Header: tc.header}
			b.setOrigin(context.Background(), cmd)
			if len(cmd.Header) != len(tc.want) {
				t.Fatalf("header %v, want %v", cmd.Header, tc.want)
			}
			for k, v := range tc.want {
				if cmd.Header[k] != v {
					t.Fatalf("header %v, want %v", cmd.Header, tc.want)
				}
			}
			if shared := sameMap(cmd.Header, b.originOnly); shared != tc.shared {
				t.Fatalf("shares the bus's map: %v, want %v", shared, tc.shared)
			}
			if len(tc.header) != len(before) {
				t.Fatalf("the sender's header became %v, was %v", tc.header, before)
			}
			for k, v := range before {
				if tc.header[k] != v {
					t.Fatalf("the sender's header became %v, was %v", tc.header, before)
				}
			}
		})
	}
}

// sameMap reports whether a and b are one map: a write through one shows
// in the other. It writes a probe key and takes it out again.
func sameMap(a, b map[string]string) bool {
	if a == nil || b == nil {
		return false
	}
	const probe = "\x00probe"
	a[probe] = "x"
	_, same := b[probe]
	delete(a, probe)
	return same
}

// The signals' bus wrapper stamps a headerless command with the shared
// origin map, and a command with a header with a copy.
func TestSignalsBusStampsTheOrigin(t *testing.T) {
	var got []*factum.Command
	next := recordingBus(func(cmd *factum.Command) { got = append(got, cmd) })
	only := newOriginHeaders("a")
	ob := originBus{next: next, instance: "a", only: only}
	sender := map[string]string{"traceparent": "t"}
	for _, h := range []map[string]string{nil, sender} {
		if err := ob.Send(context.Background(), &factum.Command{Header: h}); err != nil {
			t.Fatal(err)
		}
	}
	if !sameMap(got[0].Header, only[0]) {
		t.Fatalf("a headerless command got %v, not the shared map", got[0].Header)
	}
	if got[1].Header[factum.OriginHeader] != "a" || got[1].Header["traceparent"] != "t" || sameMap(got[1].Header, sender) {
		t.Fatalf("a command with a header got %v", got[1].Header)
	}
	if _, ok := sender[factum.OriginHeader]; ok {
		t.Fatal("the sender's header was written")
	}
}

type recordingBus func(cmd *factum.Command)

func (r recordingBus) Send(_ context.Context, cmd *factum.Command) error {
	r(cmd)
	return nil
}

var _ command.Bus = recordingBus(nil)

// The bus keeps a command's wait header only when it names the stage the
// send's context carries for the command (what Signals.Bus stamps): a
// caller's value, or one a saga's command inherits from its source
// stream, is deleted, so that it cannot keep from the origin the signals
// its wait needs. The sender's map stays as it was.
func TestSetOriginKeepsOnlyTheSendsWait(t *testing.T) {
	b := &Bus{originOnly: map[string]string{HeaderOrigin: "a"}}
	waiting := func(stage factum.CommandStage) context.Context {
		return command.WithWaitStage(context.Background(), "c-1", stage)
	}
	for _, tc := range []struct {
		name   string
		ctx    context.Context
		header map[string]string
		want   map[string]string
	}{
		{"the send's", waiting(factum.StageProcessed),
			map[string]string{HeaderOrigin: "a", factum.OriginWaitHeader: "PROCESSED"},
			map[string]string{HeaderOrigin: "a", factum.OriginWaitHeader: "PROCESSED"}},
		{"another stage's", waiting(factum.StageProjected),
			map[string]string{HeaderOrigin: "a", factum.OriginWaitHeader: "SENT"},
			map[string]string{HeaderOrigin: "a"}},
		{"no wait", context.Background(),
			map[string]string{HeaderOrigin: "a", factum.OriginWaitHeader: "PROCESSED"},
			map[string]string{HeaderOrigin: "a"}},
		{"another command's wait", command.WithWaitStage(context.Background(), "c-2", factum.StageProcessed),
			map[string]string{HeaderOrigin: "a", factum.OriginWaitHeader: "PROCESSED"},
			map[string]string{HeaderOrigin: "a"}},
		{"inherited", waiting(factum.StageProcessed),
			map[string]string{HeaderOrigin: "b", factum.OriginWaitHeader: "SAGA_HANDLED", "traceparent": "t"},
			map[string]string{HeaderOrigin: "a", "traceparent": "t"}},
		{"not a stage", waiting(factum.StageProcessed),
			map[string]string{factum.OriginWaitHeader: "SOON"},
			map[string]string{HeaderOrigin: "a"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := maps.Clone(tc.header)
			cmd := &factum.Command{ID: "c-1", Header: tc.header}
			b.setOrigin(tc.ctx, cmd)
			if !maps.Equal(cmd.Header, tc.want) {
				t.Fatalf("header %v, want %v", cmd.Header, tc.want)
			}
			if !maps.Equal(tc.header, before) {
				t.Fatalf("the sender's header became %v, was %v", tc.header, before)
			}
		})
	}
}
