package nats

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/command"
	"github.com/factum-go/factum/engine"
	"github.com/nats-io/nats-server/v2/server"
	natsgo "github.com/nats-io/nats.go"
)

func tallyCommand(id, requestID string) factum.Command {
	cmd := factum.NewCommand(factum.AggregateID{NamedAggregate: factum.NamedAggregate{Context: "shop", Aggregate: "tally"}, ID: id}, addN{N: 1})
	cmd.RequestID = requestID
	return cmd
}

// tallyID is the ID of the fleet's aggregate id in the default tenant.
func tallyID(id string) factum.AggregateID {
	return factum.AggregateID{NamedAggregate: factum.NamedAggregate{Context: "shop", Aggregate: "tally"}, ID: id, Tenant: factum.DefaultTenant}
}

// An owner that dies after processing a command and before acknowledging
// it: the command is delivered again to the next owner, which finds its
// request in the event store, so it is stored once.
func TestRedeliveryAfterACrashBeforeTheAckIsProcessedOnce(t *testing.T) {
	f := newFleet(t, inProcessWorld(t, 2, time.Second), LocalNever)
	appended := make(chan struct{})
	release := make(chan struct{})
	f.probe.hold = func(instance string, cmd *factum.Command) {
		if instance == "a" && cmd.RequestID == "crash-me" {
			close(appended)
			<-release // the process "dies" here: the ack never leaves
		}
	}
	defer close(release)
	a := f.start("a")
	f.balanced()
	if _, err := a.Gateway().Send(context.Background(), tallyCommand("t-1", "crash-me")); err != nil {
		t.Fatal(err)
	}
	select {
	case <-appended:
	case <-time.After(30 * time.Second):
		t.Fatal("the command was not processed")
	}
	f.crash("a")
	f.start("b")
	waitFor(t, 30*time.Second, "b to process the command again", func() bool { return f.probe.times("crash-me", "b") == 1 })
	streams := f.streamsOf(t, "t-1")
	if len(streams) != 1 || streams[0].RequestID != "crash-me" {
		t.Fatalf("%d streams stored for the redelivered command, want 1", len(streams))
	}
	// The redelivery was acknowledged: the partition has nothing left.
	n := f.nodes["b"]
	waitFor(t, 30*time.Second, "the redelivered command to be acknowledged", func() bool {
		s, err := n.js.Stream(context.Background(), f.w.stream)
		if err != nil {
			return false
		}
		info, err := s.Info(context.Background())
		return err == nil && info.State.Msgs == 0
	})
}

// A command for a partition whose lease names an instance that is not
// alive fails at once with an UnavailableError naming it, until a live
// instance takes the partition over; then it goes through.
func TestSendToAnUnreachableOwnerFailsFast(t *testing.T) {
	w := inProcessWorld(t, 2, 2*time.Second)
	// A lease of a dead instance, as a crash leaves it.
	n0 := w.node(t, "probe", BusConfig{})
	kv, err := n0.js.KeyValue(context.Background(), w.bucket)
	if err != nil {
		t.Fatal(err)
	}
	_ = n0.parts.Close(context.Background())
	for _, p := range []string{"shop.partition.0", "shop.partition.1"} {
		if _, err := kv.Put(context.Background(), p, []byte("ghost")); err != nil {
			t.Fatal(err)
		}
	}
	f := newFleet(t, w, LocalFirst)
	a := f.start("a")
	start := time.Now()
	_, err = a.Gateway().SendAndWait(context.Background(), tallyCommand("t-1", "r-1"), command.Wait(factum.StageProcessed))
	if time.Since(start) > time.Second {
		t.Errorf("the refused send took %v: it must not wait", time.Since(start))
	}
	var ue *UnavailableError
	if !errors.As(err, &ue) || ue.Owner != "ghost" || !errors.Is(err, ErrUnavailable) {
		t.Fatalf("send to a dead owner: %v, want an UnavailableError naming ghost", err)
	}
	if !factum.IsRetryable(err) || factum.CodeOf(err) != factum.CodeTooManyRequests || ue.RetryAfter() <= 0 {
		t.Fatalf("the error is not retryable TooManyRequests with a retry hint: %v", err)
	}
	if err := send(context.Background(), func() *engine.Engine { return a }, "t-1", "r-1", 30*time.Second); err != nil {
		t.Fatalf("after the takeover: %v", err)
	}
}

// restartableServer runs a JetStream server in process on a port and in a
// directory that a restart keeps.
type restartableServer struct {
	t    *testing.T
	opts *server.Options
	s    *server.Server
}

func startRestartable(t *testing.T) *restartableServer {
	t.Helper()
	r := &restartableServer{t: t, opts: &server.Options{Host: "127.0.0.1", Port: -1, JetStream: true, StoreDir: t.TempDir(), NoLog: true, NoSigs: true}}
	r.start()
	r.opts.Port = r.s.Addr().(*net.TCPAddr).Port
	t.Cleanup(func() { r.s.Shutdown() })
	return r
}

func (r *restartableServer) start() {
	r.t.Helper()
	s, err := server.NewServer(r.opts)
	if err != nil {
		r.t.Fatal(err)
	}
	go s.Start()
	if !s.ReadyForConnections(10 * time.Second) {
		r.t.Fatal("nats server did not start")
	}
	r.s = s
}

func (r *restartableServer) stop() {
	r.s.Shutdown()
	r.s.WaitForShutdown()
}

// While NATS is down a send fails at once with an UnavailableError that
// says so (never a hang, never a silent drop); when NATS is back the
// instance reconnects, takes its partitions again and processes commands
// with nothing done by hand.
func TestSendWhileNATSIsDownFailsFastAndRecovers(t *testing.T) {
	srv := startRestartable(t)
	w := newWorld(t, srv.s.ClientURL(), false, 2, time.Second)
	f := newFleet(t, w, LocalNever)
	a := f.start("a")
	f.balanced()
	if err := send(context.Background(), func() *engine.Engine { return a }, "t-1", "before", 10*time.Second); err != nil {
		t.Fatal(err)
	}
	srv.stop()
	n := f.nodes["a"]
	waitFor(t, 10*time.Second, "the client to notice", func() bool { return n.nc.Status() != natsgo.CONNECTED })
	start := time.Now()
	_, err := a.Gateway().Send(context.Background(), tallyCommand("t-1", "during"))
	if time.Since(start) > time.Second {
		t.Errorf("the refused send took %v: it must not wait", time.Since(start))
	}
	var ue *UnavailableError
	if !errors.As(err, &ue) || !strings.Contains(ue.Reason, "NATS is unreachable") || !factum.IsRetryable(err) {
		t.Fatalf("send while NATS is down: %v, want a retryable UnavailableError naming NATS", err)
	}
	// The leases lapse meanwhile: the instance must take its partitions
	// again by itself.
	waitFor(t, 10*time.Second, "the leases to lapse", func() bool { return len(n.parts.Owned()) == 0 })
	srv.start()
	if err := send(context.Background(), func() *engine.Engine { return a }, "t-1", "during", 60*time.Second); err != nil {
		t.Fatalf("after NATS came back: %v", err)
	}
	f.checkStored(map[string][]string{"t-1": {"before", "during"}})
}

// A command delivered to an instance that gives its partition up before
// the command's turn comes is not processed there: it stays on the stream
// for the next owner. A command accepted locally is handed over to the
// stream for the next owner too.
func TestAPartitionGivenUpIsNotActedOnAgain(t *testing.T) {
	for _, local := range []LocalMode{LocalFirst, LocalNever} {
		t.Run(fmt.Sprint("local=", local), func(t *testing.T) {
			f := newFleet(t, inProcessWorld(t, 2, 3*time.Second), local)
			entered := make(chan struct{})
			release := make(chan struct{})
			f.probe.hold = func(instance string, cmd *factum.Command) {
				if cmd.RequestID == "first" {
					close(entered)
					<-release
				}
			}
			a := f.start("a")
			f.balanced()
			// Until a claim's consumer delivered what the stream held, its
			// local commands are published: released by hand below, they
			// would stay on the stream.
			waitFor(t, 30*time.Second, "the claims to catch up", func() bool { return settled(t, a) })
			if _, err := a.Gateway().Send(context.Background(), tallyCommand("t-1", "first")); err != nil {
				t.Fatal(err)
			}
			<-entered
			second := make(chan error, 1)
			go func() {
				_, err := a.Gateway().SendAndWait(context.Background(), tallyCommand("t-1", "second"), command.Wait(factum.StageProcessed).Within(10*time.Second))
				second <- err
			}()
			b := f.engine("a").Bus().(*Bus)
			n := PartitionOf("t-1", 2)
			waitFor(t, 10*time.Second, "the second command to be queued", func() bool { return b.busy.Load() == 2 })
			go b.onRelease(n) // as the lease goroutine does when it gives n up
			waitFor(t, 10*time.Second, "the release to stop acting on the partition", func() bool {
				b.state[n].mu.Lock()
				defer b.state[n].mu.Unlock()
				return b.state[n].token == 0
			})
			close(release)
			waitFor(t, 10*time.Second, "the lane to pass the second command", func() bool { return b.busy.Load() == 0 })
			if times := f.probe.times("second", "a"); times != 0 {
				t.Fatalf("the second command was processed %d times by an instance that gave its partition up", times)
			}
			// Nobody takes the partition released by hand: the second
			// command waits on the stream.
			if got := stored(t, f); got != 1 {
				t.Fatalf("the stream holds %d commands, want the second one", got)
			}
		})
	}
}

// LocalDurable: a command SENT by its partition's owner is stored before
// it is processed locally, so the crash of that owner before processing
// loses nothing: the next owner processes it once.
func TestLocalDurableSurvivesTheCrashOfItsInstance(t *testing.T) {
	f := newFleet(t, inProcessWorld(t, 2, time.Second), LocalDurable)
	entered := make(chan struct{})
	release := make(chan struct{})
	f.probe.before = func(instance string, cmd *factum.Command) {
		if instance == "a" && cmd.RequestID == "sent" {
			close(entered)
			<-release // the process dies before the command is appended
		}
	}
	a := f.start("a")
	f.balanced()
	if _, err := a.Gateway().Send(context.Background(), tallyCommand("t-1", "sent")); err != nil {
		t.Fatal(err)
	}
	<-entered
	f.crash("a")
	f.start("b")
	waitFor(t, 30*time.Second, "b to process the command", func() bool { return f.probe.times("sent", "b") == 1 })
	close(release) // a's processing goes on into a dead connection
	// The probe counts a command as it enters the handler: b's append
	// comes after.
	waitFor(t, 30*time.Second, "b's stream to be stored", func() bool { return len(f.streamsOf(t, "t-1")) > 0 })
	f.checkStored(map[string][]string{"t-1": {"sent"}})
}

// Void commands follow the seed's rule: they never take the local path,
// so the SENT their sender gets means stored, even from the owner. A
// non-void command from the owner is not stored (LocalFirst).
func TestVoidCommandsAreAlwaysStored(t *testing.T) {
	f := newFleet(t, inProcessWorld(t, 2, 3*time.Second), LocalFirst)
	entered := make(chan string, 2)
	release := make(chan struct{})
	f.probe.before = func(_ string, cmd *factum.Command) {
		entered <- cmd.Name
		<-release
	}
	a := f.start("a")
	f.balanced()
	// Until its consumer delivered what the stream held, a claim's
	// commands are stored too (they must not overtake that).
	waitFor(t, 30*time.Second, "the claims to catch up", func() bool { return settled(t, a) })
	for _, tc := range []struct {
		body   any
		stored uint64
	}{{addN{N: 1}, 0}, {fire{}, 1}} {
		cmd := factum.NewCommand(factum.AggregateID{NamedAggregate: factum.NamedAggregate{Context: "shop", Aggregate: "tally"}, ID: "t-1"}, tc.body)
		if _, err := a.Gateway().Send(context.Background(), cmd); err != nil {
			t.Fatal(err)
		}
		name := <-entered // held in processing: a stored command is not acknowledged yet
		if got := stored(t, f); got != tc.stored {
			t.Errorf("%s from the owner: %d commands on the stream while it is processed, want %d", name, got, tc.stored)
		}
		release <- struct{}{}
	}
	close(release)
}
