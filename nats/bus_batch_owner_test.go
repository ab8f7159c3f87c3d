package nats

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/factum-go/factum"
	natsgo "github.com/nats-io/nats.go"
)

// Many senders on one instance, each sending its commands of one
// aggregate one after another, the aggregate's partition owned by the
// other instance: their sends form batches, and every command is
// processed once, by the owner, with contiguous versions and each
// sender's order kept, in every local mode (LocalDurable's owner must not
// take a batch for a copy of its own).
func TestCrossingBatchesAreProcessedOnceInOrder(t *testing.T) {
	for _, local := range []LocalMode{LocalFirst, LocalNever, LocalDurable} {
		t.Run(fmt.Sprint("local=", local), func(t *testing.T) { testCrossingBatches(t, local) })
	}
}

func testCrossingBatches(t *testing.T, local LocalMode) {
	f := newFleet(t, sharedWorld(t, 8, 3*time.Second), local)
	a := f.start("a")
	f.start("b")
	f.balanced()
	id := ""
	for i := range 1000 {
		if f.owner(fmt.Sprintf("t-%d", i)) == "b" {
			id = fmt.Sprintf("t-%d", i)
			break
		}
	}
	var batches, inBatches atomic.Int64
	sub, err := f.nodes["a"].nc.Subscribe(f.w.prefix+".>", func(m *natsgo.Msg) {
		if c := m.Header.Get(HeaderBatch); c != "" {
			batches.Add(1)
			var n int
			_, _ = fmt.Sscan(c, &n)
			inBatches.Add(int64(n))
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = sub.Unsubscribe() }()

	const senders, per = 20, 10
	requests := map[string][]string{}
	var wg sync.WaitGroup
	for s := range senders {
		for j := range per {
			requests[id] = append(requests[id], fmt.Sprintf("s%d-%d", s, j))
		}
		wg.Go(func() {
			for j := range per {
				if _, err := a.Gateway().Send(context.Background(), tallyCommand(id, fmt.Sprintf("s%d-%d", s, j))); err != nil {
					t.Errorf("s%d-%d: %v", s, j, err)
					return
				}
			}
		})
	}
	wg.Wait()
	waitFor(t, 30*time.Second, "every command to be processed", func() bool { return len(f.streamsOf(t, id)) >= senders*per })
	f.checkStored(requests)
	f.probe.check(t)
	if batches.Load() == 0 {
		t.Error("no batch message: the concurrent sends did not coalesce")
	}
	t.Logf("%d batch messages holding %d of %d commands", batches.Load(), inBatches.Load(), senders*per)
	at := map[string]int{}
	for i, req := range f.requestsOf(t, id) {
		at[req] = i
	}
	for s := range senders {
		for j := 1; j < per; j++ {
			if prev, cur := fmt.Sprintf("s%d-%d", s, j-1), fmt.Sprintf("s%d-%d", s, j); at[prev] > at[cur] {
				t.Errorf("%s stored at %d, after %s at %d: the sender's order was not kept", prev, at[prev], cur, at[cur])
			}
		}
	}
	f.probe.mu.Lock()
	defer f.probe.mu.Unlock()
	for _, req := range requests[id] {
		if by := f.probe.by[req]; len(by) != 1 || by["b"] != 1 {
			t.Errorf("%s processed %v, want once by the owner b", req, by)
		}
	}
	if c := f.store.conflicts.Load(); c != 0 {
		t.Errorf("%d version conflicts", c)
	}
}

// sendBatchMsg publishes, through bus's connection, a batch message of
// commands of the aggregate id with the request IDs reqs, as a sender's
// bus makes it, on the aggregate's command subject.
func sendBatchMsg(t *testing.T, bus *Bus, id string, reqs ...string) {
	t.Helper()
	sendBatchMsgFrom(t, bus, "", id, reqs...)
}

// sendBatchMsgFrom is sendBatchMsg for commands whose origin is the
// instance named origin; bus's own when empty.
func sendBatchMsgFrom(t *testing.T, bus *Bus, origin, id string, reqs ...string) {
	t.Helper()
	var batch []*outSend
	for _, req := range reqs {
		cmd := tallyCommand(id, req)
		cmd.AllowCreate = true // as the gateway makes a command of a handler that may create
		cmd.AggregateID.Tenant = factum.DefaultTenant
		bus.setOrigin(context.Background(), &cmd)
		if origin != "" {
			cmd.Header = map[string]string{HeaderOrigin: origin}
		}
		body, err := marshalBody(&cmd)
		if err != nil {
			t.Fatal(err)
		}
		batch = append(batch, &outSend{cmd: &cmd, body: body})
	}
	n := PartitionOf(id, len(bus.state))
	if _, err := bus.put(context.Background(), bus.batchMsg(batch, n)); err != nil {
		t.Fatal(err)
	}
}

// A batch message whose owner processes it whole acknowledges it once
// and signals each command; one that does not decode (its body, its count
// or its aggregates) is terminated and logged, not delivered again, and
// the commands behind it go on.
func TestMalformedBatchIsTerminated(t *testing.T) {
	var logs syncBuffer
	w := inProcessWorld(t, 2, 3*time.Second)
	n := w.node(t, "a", BusConfig{Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	signals := make(chan factum.Signal, 16)
	bus := n.startBus(t, sigExec{}, sigSink(signals))

	id := "t-1"
	part := PartitionOf(id, 2)
	bad := func(count string, data []byte) {
		h := natsgo.Header{HeaderBatch: {count}}
		if _, err := bus.put(context.Background(), &natsgo.Msg{Subject: CommandSubject(w.prefix, tallyID(id).NamedAggregate, part), Header: h, Data: data}); err != nil {
			t.Fatal(err)
		}
	}
	bad("2", []byte("[{"))
	two := []factum.Command{tallyCommand(id, "x0"), tallyCommand(id, "x1")}
	bad("3", encodeCommands(sends(t, []*factum.Command{&two[0], &two[1]})))
	sendBatchMsg(t, bus, id, "r0", "r1", "r2")
	var got []string
	for range 3 {
		select {
		case s := <-signals:
			got = append(got, s.RequestID)
		case <-time.After(10 * time.Second):
			t.Fatalf("signals %v, want r0, r1, r2", got)
		}
	}
	if fmt.Sprint(got) != "[r0 r1 r2]" {
		t.Errorf("signals %v, want [r0 r1 r2]", got)
	}
	waitFor(t, 10*time.Second, "the stream to be empty", func() bool {
		info, err := bus.stream.Info(context.Background())
		return err == nil && info.State.Msgs == 0
	})
	if c := bytes.Count(logs.bytes(), []byte("dropping a command message that does not decode")); c != 2 {
		t.Errorf("%d messages logged as not decoding, want 2:\n%s", c, logs.bytes())
	}
	select {
	case s := <-signals:
		t.Errorf("signal %+v after the batch", s)
	case <-time.After(200 * time.Millisecond):
	}
}

// sigExec is an executor that appends nothing and succeeds.
type sigExec struct{}

func (sigExec) Process(_ context.Context, cmd *factum.Command) factum.Signal {
	return factum.Signal{CommandID: cmd.ID, RequestID: cmd.RequestIDOrID(), Stage: factum.StageProcessed, AggregateID: cmd.AggregateID}
}

// sigSink sends every signal on its channel.
type sigSink chan factum.Signal

func (s sigSink) Signal(sig factum.Signal) { s <- sig }

// syncBuffer is a buffer safe for concurrent writes, for a logger.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) bytes() []byte {
	b.mu.Lock()
	defer b.mu.Unlock()
	return bytes.Clone(b.buf.Bytes())
}

// A batch whose owner gives its partition up while a command of it is
// under way (its claim cut mid-batch) is handed over from the first
// command after the last one that succeeded (whole when none did): the
// next owner processes the rest, so each is stored once, in the batch's
// order. A batch of the partition kept is processed here whole.
func TestBatchCutMidwayHandsItsRestOver(t *testing.T) {
	const partitions = 2
	f := newFleet(t, sharedWorld(t, partitions, 3*time.Second), LocalFirst)
	_, bus, free := f.startHeld(t, "r2")
	ids := idsApart(t, bus, partitions)
	requests := map[string][]string{}
	for n := range partitions {
		for i := range 5 {
			requests[ids[n]] = append(requests[ids[n]], fmt.Sprintf("%s-r%d", ids[n], i))
		}
		sendBatchMsg(t, bus, ids[n], requests[ids[n]]...)
	}
	given := f.cutA(t, bus, ids, "r2", free)
	f.checkStored(requests)
	f.checkRequests(t, ids, given, requests)
	// Its chain may have started at a before the cut (a run's commands
	// start one after another's start), but it was appended at b.
	f.checkOnce(t, ids[given]+"-r3", "b", false, "of the batch cut at a")
	f.checkOnce(t, ids[1-given]+"-r3", "a", true, "of the batch a kept")
}

// idsApart returns an aggregate ID in each of the partitions, each in a
// lane of bus's own: a command held in one lane does not hold the others.
func idsApart(t testing.TB, bus *Bus, partitions int) []string {
	t.Helper()
	ids := make([]string, partitions)
	lanes := map[*lane]bool{}
	for i := 0; i < 10000; i++ {
		id := fmt.Sprintf("t-%d", i)
		n := PartitionOf(id, partitions)
		ln := bus.laneOf(&factum.AggregateID{NamedAggregate: tallyID(id).NamedAggregate, ID: id})
		if ids[n] != "" || lanes[ln] {
			continue
		}
		ids[n], lanes[ln] = id, true
		if len(lanes) == partitions {
			return ids
		}
	}
	t.Fatal("no aggregate IDs in lanes apart")
	return nil
}
