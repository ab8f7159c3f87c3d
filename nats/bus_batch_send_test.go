package nats

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/factum-go/factum"
	"github.com/nats-io/nats.go/jetstream"
)

// sender is instance a's bus on a world where instance b owns the other
// partitions and consumes none of them: what a sends for b's partitions
// stays on the stream, for the test to read. After hold, its next
// coalesced publish waits until release is called (at the latest when
// the test ends).
type sender struct {
	bus    *Bus
	a, b   *node
	id     factum.AggregateID // an aggregate of b's
	stream jetstream.Stream

	mu   sync.Mutex
	gate chan struct{} // armed by hold, taken by the next publish
	open func()
}

func newSender(t *testing.T, cfg BusConfig) *sender {
	t.Helper()
	w := inProcessWorld(t, 4, 3*time.Second)
	nb := w.node(t, "b", cfg)
	nb.waitOwns(t, 4)
	na := w.node(t, "a", cfg)
	waitFor(t, 30*time.Second, "fair shares", func() bool {
		return len(na.parts.Owned()) == 2 && len(nb.parts.Owned()) == 2
	})
	done := make(handOff, 1024)
	eb, err := na.newBus(done, done)
	if err != nil {
		t.Fatal(err)
	}
	s := &sender{bus: eb.(*Bus), a: na, b: nb, open: func() {}}
	s.bus.hooks = &busHooks{coalescing: func(int) {
		s.mu.Lock()
		gate := s.gate
		s.gate = nil
		s.mu.Unlock()
		if gate != nil {
			<-gate
		}
	}}
	s.bus.Start(context.Background())
	t.Cleanup(func() {
		s.release()
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = s.bus.Shutdown(ctx)
	})
	for i := range 1000 {
		if _, ok := nb.parts.OwnsAggregate(fmt.Sprintf("t-%d", i)); ok {
			s.id = tallyID(fmt.Sprintf("t-%d", i))
			break
		}
	}
	if s.stream, err = nb.js.Stream(context.Background(), w.stream); err != nil {
		t.Fatal(err)
	}
	return s
}

// hold makes the next coalesced publish wait until release.
func (s *sender) hold() {
	s.mu.Lock()
	defer s.mu.Unlock()
	gate := make(chan struct{})
	s.gate, s.open = gate, sync.OnceFunc(func() { close(gate) })
}

// release lets the publish held by hold go.
func (s *sender) release() {
	s.mu.Lock()
	open := s.open
	s.mu.Unlock()
	open()
}

// command returns a command of s's aggregate with the request ID req.
func (s *sender) command(req string) *factum.Command {
	cmd := factum.NewCommand(s.id, addN{N: 1})
	cmd.RequestID = req
	return &cmd
}

// sendAsync sends cmd with ctx in a goroutine and returns the channel
// its error comes on.
func (s *sender) sendAsync(ctx context.Context, cmd *factum.Command) <-chan error {
	errc := make(chan error, 1)
	go func() { errc <- s.bus.Send(ctx, cmd) }()
	return errc
}

// waiting returns how many sends wait in the outbox of s's aggregate.
func (s *sender) waiting() int {
	s.bus.out.mu.Lock()
	defer s.bus.out.mu.Unlock()
	if box := s.bus.out.m[outKeyOf(s.command(""))]; box != nil {
		return len(box.waiting)
	}
	return 0
}

// outboxes returns how many outboxes the bus holds: aggregates with a
// publish in flight.
func (s *sender) outboxes() int {
	s.bus.out.mu.Lock()
	defer s.bus.out.mu.Unlock()
	return len(s.bus.out.m)
}

// queue sends each command in a goroutine, one after another once the
// one before waits in the outbox, and returns their error channels.
func (s *sender) queue(t *testing.T, ctx context.Context, cmds ...*factum.Command) []<-chan error {
	t.Helper()
	var errcs []<-chan error
	for _, cmd := range cmds {
		before := s.waiting()
		errcs = append(errcs, s.sendAsync(ctx, cmd))
		waitFor(t, 10*time.Second, "the send to wait in the outbox", func() bool { return s.waiting() == before+1 })
	}
	return errcs
}

// storedMsg is a message of the stream: its header and its commands'
// request IDs.
type storedMsg struct {
	msgID, batch string
	requests     []string
}

// messages returns the messages the stream holds, in order.
func (s *sender) messages(t *testing.T) []storedMsg {
	t.Helper()
	info, err := s.stream.Info(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var out []storedMsg
	for seq := info.State.FirstSeq; seq <= info.State.LastSeq && info.State.Msgs > 0; seq++ {
		m, err := s.stream.GetMsg(context.Background(), seq)
		if err != nil {
			t.Fatalf("message %d: %v", seq, err)
		}
		sm := storedMsg{msgID: m.Header.Get(jetstream.MsgIDHeader), batch: m.Header.Get(HeaderBatch)}
		if sm.batch == "" {
			cmd, err := decodeCommand(m.Data)
			if err != nil {
				t.Fatal(err)
			}
			if got := m.Header.Get(HeaderCommandID); got != cmd.ID || sm.msgID != cmd.ID {
				t.Errorf("message %d: command ID header %q, message ID %q, want the command's %s", seq, got, sm.msgID, cmd.ID)
			}
			sm.requests = []string{cmd.RequestID}
		} else {
			cmds, err := decodeBatch(m.Data, sm.batch)
			if err != nil {
				t.Fatal(err)
			}
			for _, c := range cmds {
				sm.requests = append(sm.requests, c.RequestID)
			}
			if !strings.HasPrefix(sm.msgID, cmds[0].ID+"/"+sm.batch+"/") {
				t.Errorf("batch message %d: message ID %q, want its first command's ID and count first", seq, sm.msgID)
			}
		}
		out = append(out, sm)
	}
	return out
}

// wait returns the errors of errcs, in order.
func wait(t *testing.T, errcs []<-chan error) []error {
	t.Helper()
	errs := make([]error, len(errcs))
	for i, c := range errcs {
		select {
		case errs[i] = <-c:
		case <-time.After(20 * time.Second):
			t.Fatalf("send %d did not return", i)
		}
	}
	return errs
}

// A send for another instance's partition that finds no publish of its
// aggregate in flight is stored as today's message of one command: no
// batch header, the command ID as message ID.
func TestUncontendedCrossingSendIsOneCommandMessage(t *testing.T) {
	s := newSender(t, BusConfig{})
	if err := s.bus.Send(context.Background(), s.command("r0")); err != nil {
		t.Fatal(err)
	}
	msgs := s.messages(t)
	if len(msgs) != 1 || msgs[0].batch != "" || fmt.Sprint(msgs[0].requests) != "[r0]" {
		t.Fatalf("stored %+v, want one message of one command r0", msgs)
	}
}

// Sends of one aggregate arriving while a publish of it is in flight
// travel together, in their order, in batches of at most MaxBatch; every
// send returns nil.
func TestCrossingSendsBatchUpToMaxBatch(t *testing.T) {
	s := newSender(t, BusConfig{MaxBatch: 4})
	s.hold()
	errcs := []<-chan error{s.sendAsync(context.Background(), s.command("r0"))}
	var cmds []*factum.Command
	for i := 1; i <= 10; i++ {
		cmds = append(cmds, s.command(fmt.Sprintf("r%d", i)))
	}
	// r0 is held on its way (the first publish), r1 to r10 wait.
	waitFor(t, 10*time.Second, "r0 to be on its way", func() bool { return s.waiting() == 0 && s.outboxes() == 1 })
	errcs = append(errcs, s.queue(t, context.Background(), cmds...)...)
	s.release()
	for i, err := range wait(t, errcs) {
		if err != nil {
			t.Errorf("send r%d: %v", i, err)
		}
	}
	var got []string
	for _, m := range s.messages(t) {
		got = append(got, m.batch+":"+strings.Join(m.requests, ","))
	}
	want := []string{":r0", "4:r1,r2,r3,r4", "4:r5,r6,r7,r8", "2:r9,r10"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("stored %v, want %v", got, want)
	}
	if n, boxes := s.waiting(), s.outboxes(); n != 0 || boxes != 0 {
		t.Errorf("%d sends waiting, %d outboxes left, want none", n, boxes)
	}
}

// A send whose ctx ends while it waits in the outbox is taken out and not
// sent: it gets the sender's "gave up" error; the others go on.
func TestQueuedSendWhoseContextEndsIsNotSent(t *testing.T) {
	s := newSender(t, BusConfig{})
	s.hold()
	errcs := []<-chan error{s.sendAsync(context.Background(), s.command("r0"))}
	waitFor(t, 10*time.Second, "r0 to be on its way", func() bool { return s.outboxes() == 1 })
	ctx, cancel := context.WithCancel(context.Background())
	errcs = append(errcs, s.queue(t, ctx, s.command("r1"))...)
	errcs = append(errcs, s.queue(t, context.Background(), s.command("r2"))...)
	cancel()
	select {
	case err := <-errcs[1]:
		if factum.CodeOf(err) != factum.CodeTooManyRequests || !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "gave up before the command was sent") {
			t.Errorf("r1: %v, want the sender's gave-up error", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("r1's send did not return when its ctx ended")
	}
	s.release()
	if errs := wait(t, []<-chan error{errcs[0], errcs[2]}); errs[0] != nil || errs[1] != nil {
		t.Fatalf("r0, r2: %v", errs)
	}
	var got []string
	for _, m := range s.messages(t) {
		got = append(got, m.batch+":"+strings.Join(m.requests, ","))
	}
	// r2, alone in its publish, is a message of one command.
	if want := []string{":r0", ":r2"}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("stored %v, want %v", got, want)
	}
}

// A batch JetStream does not store fails every command of it with the
// code a send of one would get, each with its own identities: at the
// subject's bound, TooManyRequests; with NATS gone, an UnavailableError.
func TestFailedBatchFailsEveryCommand(t *testing.T) {
	for _, tc := range []struct {
		name string
		fill int // commands stored first: MaxPending
		cut  bool
		want func(error) bool
	}{
		{"at-max-pending", 2, false, func(err error) bool {
			return factum.CodeOf(err) == factum.CodeTooManyRequests && strings.Contains(err.Error(), "at their bound")
		}},
		{"connection-closed", 0, true, func(err error) bool {
			return factum.CodeOf(err) == factum.CodeTooManyRequests && errors.Is(err, ErrUnavailable)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newSender(t, BusConfig{MaxPending: tc.fill})
			for i := range tc.fill {
				if err := s.bus.Send(context.Background(), s.command(fmt.Sprintf("fill-%d", i))); err != nil {
					t.Fatal(err)
				}
			}
			s.hold()
			cmds := []*factum.Command{s.command("r0"), s.command("r1"), s.command("r2"), s.command("r3")}
			errcs := []<-chan error{s.sendAsync(context.Background(), cmds[0])}
			waitFor(t, 10*time.Second, "r0 to be on its way", func() bool { return s.outboxes() == 1 })
			errcs = append(errcs, s.queue(t, context.Background(), cmds[1:]...)...)
			if tc.cut {
				s.a.nc.Close()
			}
			s.release()
			for i, err := range wait(t, errcs) {
				var fe *factum.Error
				if !tc.want(err) || !errors.As(err, &fe) || fe.CommandID != cmds[i].ID || fe.RequestID != cmds[i].RequestID {
					t.Errorf("r%d: %v (%+v), want its own failure", i, err, fe)
				}
			}
			if got := s.messages(t); len(got) != tc.fill {
				t.Errorf("the stream holds %d messages, want the %d stored first", len(got), tc.fill)
			}
		})
	}
}

// decodeBatch refuses a body whose count, aggregates or commands do not
// match a batch's.
func TestDecodeBatchRefusesMalformed(t *testing.T) {
	named := factum.NamedAggregate{Context: "shop", Aggregate: "tally"}
	enc := func(cmds ...*factum.Command) []byte { return encodeCommands(sends(t, cmds)) }
	mk := func(id factum.AggregateID) *factum.Command {
		c := factum.NewCommand(id, addN{N: 1})
		return &c
	}
	a1, a2 := mk(named.WithID("x")), mk(named.WithID("x"))
	other := mk(named.WithID("y"))
	tenant := mk(factum.AggregateID{NamedAggregate: named, ID: "x", Tenant: "t2"})
	noID := func() *factum.Command { return &factum.Command{Name: "add_n", Body: addN{N: 1}} }
	if cmds, err := decodeBatch(enc(a1, a2), "2"); err != nil || len(cmds) != 2 || cmds[0].ID != a1.ID || cmds[1].ID != a2.ID {
		t.Fatalf("a good batch: %v, %v", cmds, err)
	}
	for name, tc := range map[string]struct {
		data  []byte
		count string
	}{
		"not-binary":      {[]byte("[{"), "2"},
		"json":            {[]byte(`[` + string(commandJSON(t, a1)) + `,` + string(commandJSON(t, a2)) + `]`), "2"},
		"truncated":       {enc(a1, a2)[:20], "2"},
		"count-mismatch":  {enc(a1, a2), "3"},
		"one-command":     {enc(a1), "1"},
		"two-aggregates":  {enc(a1, other), "2"},
		"two-tenants":     {enc(a1, tenant), "2"},
		"invalid-command": {enc(noID(), noID()), "2"},
	} {
		if _, err := decodeBatch(tc.data, tc.count); err == nil {
			t.Errorf("%s: decoded, want an error", name)
		}
	}
}
