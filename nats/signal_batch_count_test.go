package nats

import (
	"testing"
	"time"

	"github.com/factum-go/factum"
	natsgo "github.com/nats-io/nats.go"
)

// A malformed batch (see HeaderSignals) counts as dropped the signals its
// header says when a message of its size can hold that many, else those
// its body holds, at least one: a header out of range never inflates
// Dropped past what the message could have carried.
func TestMalformedSignalBatchCountsWhatItCouldHold(t *testing.T) {
	w := inProcessWorld(t, 1, 3*time.Second)
	prefix := w.prefix + ".signal"
	nc, err := natsgo.Connect(w.url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	b, err := NewSignals(SignalsConfig{Conn: nc, Instance: "b", Prefix: prefix})
	if err != nil {
		t.Fatal(err)
	}
	got := make(chan factum.Signal, 16)
	if _, err := b.Sink(sigSink(got)); err != nil {
		t.Fatal(err)
	}
	enc, err := encodeSignals([]factum.Signal{{Stage: factum.StageProcessed, CommandID: "e0"}, {Stage: factum.StageProcessed, CommandID: "e1"}})
	if err != nil {
		t.Fatal(err)
	}
	two := string(enc)
	for _, tc := range []struct {
		name, header, body string
		want               uint64
	}{
		{"more than the body holds", "3", two, 3},
		{"not a number", "three", two, 2},
		{"not a number nor a body", "three", "not a body", 1},
		{"JSON", "2", `[{"commandId":"e0"},{"commandId":"e1"}]`, 2},
		{"negative", "-5", two, 2},
		{"zero", "0", two, 2},
		{"more than the message could hold", "1000", two, 2},
		{"the largest int", "9223372036854775807", two, 2},
		{"past the largest int", "99999999999999999999", two, 2},
		{"past the largest int, not a body", "99999999999999999999", "[", 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := b.Stats()
			if err := nc.PublishMsg(&natsgo.Msg{Subject: SignalSubject(prefix, "b"), Header: natsgo.Header{HeaderSignals: []string{tc.header}}, Data: []byte(tc.body)}); err != nil {
				t.Fatal(err)
			}
			waitFor(t, 10*time.Second, "the malformed batch to be dropped", func() bool { return b.Stats().Dropped != before.Dropped })
			if d := b.Stats().Dropped - before.Dropped; d != tc.want {
				t.Errorf("dropped %d signals, want %d", d, tc.want)
			}
			if r := b.Stats().Received - before.Received; r != 0 {
				t.Errorf("received %d signals, want 0", r)
			}
			select {
			case s := <-got:
				t.Errorf("signal of %s delivered from a malformed batch", s.CommandID)
			default:
			}
		})
	}
}
