package nats

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"time"

	"github.com/factum-go/factum"
	"github.com/nats-io/nats.go/jetstream"
)

// A batch's message ID must not be one a command sent alone can have:
// command IDs may hold '+' and hex digits, so a command whose ID is the
// batch's message ID, stored first within the de-duplication window,
// would make JetStream drop the batch as a duplicate, and every Send of
// it would return nil for commands that were never stored.
func TestBatchMessageIDIsNoCommandID(t *testing.T) {
	s := newSender(t, BusConfig{})
	r1, r2 := s.command("r1"), s.command("r2")
	// The message ID the batch of r1 and r2 gets (the origin does not
	// enter it).
	s.bus.setOrigin(context.Background(), r1)
	s.bus.setOrigin(context.Background(), r2)
	n := PartitionOf(s.id.ID, len(s.bus.state))
	msgID := s.bus.batchMsg([]*outSend{{cmd: r1}, {cmd: r2}}, n).Header.Get(jetstream.MsgIDHeader)
	if err := factum.ValidateID("command id", msgID); err != nil {
		t.Skipf("the batch's message ID %q is no valid command ID: %v", msgID, err)
	}
	other := s.command("other")
	other.ID = msgID
	if err := s.bus.Send(context.Background(), other); err != nil {
		t.Fatal(err)
	}
	s.hold()
	errcs := []<-chan error{s.sendAsync(context.Background(), s.command("r0"))}
	waitFor(t, 10*time.Second, "r0 to be on its way", func() bool { return s.outboxes() == 1 })
	errcs = append(errcs, s.queue(t, context.Background(), r1, r2)...)
	s.release()
	for i, err := range wait(t, errcs) {
		if err != nil {
			t.Fatalf("r%d: %v", i, err)
		}
	}
	var got []string
	for _, m := range s.messages(t) {
		got = append(got, strings.Join(m.requests, ","))
	}
	if want := []string{"other", "r0", "r1,r2"}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("stored %v, want %v: Send returned nil for r1 and r2", got, want)
	}
}

// fakeMsg is a delivered message that is never looked at.
type fakeMsg struct{ jetstream.Msg }

// A command handed over gets a message ID no command ID equals, nor a
// batch's: IDs may hold '@' and digits, so "ID@seq" could be a command's
// ID, stored first within the de-duplication window, and JetStream would
// drop the hand-over as its duplicate.
func TestHandedMessageIDIsNoCommandID(t *testing.T) {
	one := tallyCommand("t-1", "r0")
	two := tallyCommand("t-1", "r1")
	for _, c := range []struct {
		j *job
		k int
	}{
		{&job{cmd: &one, msg: fakeMsg{}, seq: 5}, 0},
		{&job{cmd: &one, more: []*factum.Command{&two}, msg: fakeMsg{}, seq: 5}, 0},
		{&job{cmd: &one, more: []*factum.Command{&two}, msg: fakeMsg{}, seq: 5}, 1},
	} {
		id := handedID(c.j, c.k)
		if err := factum.ValidateID("command id", id); err == nil {
			t.Errorf("handed ID %q (k %d) is a valid command ID", id, c.k)
		}
	}
	batch := &job{cmd: &one, more: []*factum.Command{&two}, msg: fakeMsg{}, seq: 5}
	if a, b := handedID(batch, 0), handedID(batch, 1); a == b {
		t.Errorf("a batch and its rest are handed under one ID %q", a)
	}
}
