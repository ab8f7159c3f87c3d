package nats

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"reflect"
	"testing"
	"time"

	"github.com/factum-go/factum"
	natsgo "github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"pgregory.net/rapid"
)

// A send marshals its body alone, and the bytes are those of the whole
// command's JSON: marshalBody fails exactly when marshalCommand does,
// with its error; the command's JSON built around the body's is
// marshalCommand's, byte for byte; a batch of sends holding their
// bodies' JSON encodes to the bytes of one holding the bodies' JSON as
// their commands' JSON holds it (to the same commands where a header of
// several keys, which travels in the map's order, makes the bytes
// differ); and a send's size bounds the bytes its command takes in any
// batch.
func TestBodyFirstSendsMakeTheSameBytes(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		cmds := genCommands(rt)
		for _, c := range cmds {
			switch rapid.IntRange(0, 9).Draw(rt, "unencodable") {
			case 0:
				c.Body = math.NaN()
			case 1:
				c.Body = map[string]any{"ch": make(chan int)}
			case 2:
				c.CreateTime = time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)
			case 3:
				c.CreateTime = time.Date(-1, 1, 1, 0, 0, 0, 0, time.UTC)
			case 4:
				c.CreateTime = time.Date(2026, 1, 1, 0, 0, 0, 0, time.FixedZone("", -24*3600))
			}
		}
		var old, body []*outSend
		manyKeys := false
		for _, c := range cmds {
			data, derr := marshalCommand(c)
			b, berr := marshalBody(c)
			if (derr == nil) != (berr == nil) || derr != nil && (derr.Error() != berr.Error() || factum.CodeOf(berr) != factum.CodeIllegalArgument) {
				rt.Fatalf("marshalBody: %v; marshalCommand: %v", berr, derr)
			}
			if derr != nil {
				continue
			}
			whole, err := marshalCommandBody(c, b)
			if err != nil || !bytes.Equal(whole, data) {
				rt.Fatalf("the command's JSON around its body's\n%s (%v), want\n%s", whole, err, data)
			}
			s := &outSend{cmd: c, body: b}
			if n := len(appendCommand(nil, c, b, &factum.Command{})); n > s.size() {
				rt.Fatalf("a command of %d bytes in a batch, its send's size %d", n, s.size())
			}
			var fields map[string]json.RawMessage
			if err := json.Unmarshal(data, &fields); err != nil {
				rt.Fatal(err)
			}
			old = append(old, &outSend{cmd: c, body: fields["body"]})
			body = append(body, s)
			manyKeys = manyKeys || len(c.Header) > 1
		}
		if len(old) == 0 {
			return
		}
		got, want := encodeCommands(body), encodeCommands(old)
		if !manyKeys {
			if !bytes.Equal(got, want) {
				rt.Fatalf("batch body\n%x, want\n%x", got, want)
			}
			return
		}
		g, err := decodeCommands(got, len(body))
		if err != nil {
			rt.Fatal(err)
		}
		w, err := decodeCommands(want, len(old))
		if err != nil {
			rt.Fatal(err)
		}
		if !reflect.DeepEqual(g, w) {
			rt.Fatalf("batch commands\n%+v, want\n%+v", g, w)
		}
	})
}

// A crossing send stores the bytes the whole command's JSON made: alone,
// the message of encodeCommand; in a batch, the body encodeCommands
// makes of the commands' JSON.
func TestCrossingSendsStoreTheBytesOfTheCommandsJSON(t *testing.T) {
	s := newSender(t, BusConfig{})
	ctx := context.Background()
	alone := s.command("r0")
	if err := s.bus.Send(ctx, alone); err != nil {
		t.Fatal(err)
	}
	s.hold()
	errcs := []<-chan error{s.sendAsync(ctx, s.command("r1"))}
	waitFor(t, 10*time.Second, "r1 to be on its way", func() bool { return s.outboxes() == 1 })
	batch := []*factum.Command{s.command("r2"), s.command("r3"), s.command("r4")}
	errcs = append(errcs, s.queue(t, ctx, batch...)...)
	s.release()
	for i, err := range wait(t, errcs) {
		if err != nil {
			t.Fatalf("send %d: %v", i+1, err)
		}
	}
	info, err := s.stream.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var stored []*jetstream.RawStreamMsg
	for seq := info.State.FirstSeq; seq <= info.State.LastSeq; seq++ {
		m, err := s.stream.GetMsg(ctx, seq)
		if err != nil {
			t.Fatal(err)
		}
		stored = append(stored, m)
	}
	if len(stored) != 3 {
		t.Fatalf("the stream holds %d messages, want r0, r1 and the batch of r2 to r4", len(stored))
	}
	want, err := encodeCommand(s.bus.cfg.SubjectPrefix, alone, PartitionOf(alone.AggregateID.ID, len(s.bus.state)))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(stored[0].Data, want.Data) || !sameHeaders(stored[0].Header, want.Header) {
		t.Errorf("r0 stored as\n%s %v, want\n%s %v", stored[0].Data, stored[0].Header, want.Data, want.Header)
	}
	if body := encodeCommands(sends(t, batch)); !bytes.Equal(stored[2].Data, body) || stored[2].Header.Get(HeaderBatch) != "3" {
		t.Errorf("the batch stored as\n%x, want\n%x", stored[2].Data, body)
	}
}

// sameHeaders reports whether got holds every header of want, with its
// values.
func sameHeaders(got, want natsgo.Header) bool {
	for k, v := range want {
		if !reflect.DeepEqual(got[k], v) {
			return false
		}
	}
	return true
}

// A command that does not encode fails its send at once with
// marshalCommand's error, alone or while a publish of its aggregate is in
// flight (it never waits in the outbox), and is not stored.
func TestUnencodableSendFailsAtOnce(t *testing.T) {
	s := newSender(t, BusConfig{})
	ctx := context.Background()
	bad := func(req string) []*factum.Command {
		nan, year, zone := s.command(req+"-nan"), s.command(req+"-year"), s.command(req+"-zone")
		nan.Body = math.NaN()
		year.CreateTime = time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)
		zone.CreateTime = time.Now().In(time.FixedZone("", 25*3600))
		return []*factum.Command{nan, year, zone}
	}
	check := func(cmd *factum.Command) {
		t.Helper()
		_, want := marshalCommand(cmd)
		if err := s.bus.Send(ctx, cmd); err == nil || want == nil || err.Error() != want.Error() || factum.CodeOf(err) != factum.CodeIllegalArgument {
			t.Errorf("%s: %v, want %v", cmd.RequestID, err, want)
		}
	}
	for _, cmd := range bad("alone") {
		check(cmd)
	}
	s.hold()
	errc := s.sendAsync(ctx, s.command("r0"))
	waitFor(t, 10*time.Second, "r0 to be on its way", func() bool { return s.outboxes() == 1 })
	for _, cmd := range bad("joining") {
		check(cmd)
	}
	if n := s.waiting(); n != 0 {
		t.Errorf("%d sends wait in the outbox, want none", n)
	}
	s.release()
	if err := wait(t, []<-chan error{errc})[0]; err != nil {
		t.Fatal(err)
	}
	if got := s.messages(t); len(got) != 1 {
		t.Errorf("the stream holds %+v, want r0 alone", got)
	}
}

// A send that finds no publish of its aggregate in flight goes alone, and
// costs what a send of a bus that never batches does (MaxBatch 1): it
// marshals its command's JSON once, not its body's first, allocating
// only its outbox besides.
func TestASendAloneMarshalsItsCommandOnce(t *testing.T) {
	if raceDetector {
		t.Skip("the race detector's sync.Pool drops encoders at random")
	}
	s := newSender(t, BusConfig{})
	ctx := context.Background()
	n := PartitionOf(s.id.ID, len(s.bus.state))
	cmd := s.command("r0")
	if err := s.bus.Send(ctx, cmd); err != nil { // stamps it, and warms up
		t.Fatal(err)
	}
	measure := func(send func() error) float64 {
		return testing.AllocsPerRun(200, func() {
			if err := send(); err != nil {
				t.Fatal(err)
			}
		})
	}
	single := func() error { _, err := s.bus.publishSeq(ctx, cmd, n, false); return err }
	alone := func() error { _, err := s.bus.sendCoalesced(ctx, cmd, n); return err }
	// The least of a few rounds each, alternating: the client's own
	// allocations settle after the first, and the instances' leases
	// allocate now and then.
	least := [2]float64{math.Inf(1), math.Inf(1)}
	for range 6 {
		least[0] = min(least[0], measure(single))
		least[1] = min(least[1], measure(alone))
	}
	if least[1] > least[0]+1 {
		t.Errorf("a send alone allocates %v times, a send of a bus that never batches %v", least[1], least[0])
	}
}
