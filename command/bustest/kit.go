package bustest

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/command"
	"github.com/factum-go/factum/internal/kit"
)

// Harness is one bus under test, wired to the kit's processor and sink.
type Harness struct {
	// Bus is the bus, started and ready to accept commands.
	Bus command.Bus
	// Shutdown stops admission (Send fails from then on) and returns once
	// every command the bus accepted has been processed and its signal
	// emitted; at ctx's end it may give up with an error.
	Shutdown func(ctx context.Context) error
	// Capacity is how many commands for one aggregate the bus holds
	// waiting while that aggregate's command in progress is blocked; a
	// bus must be bounded, so it must be positive.
	Capacity int
}

// NewBus returns a started bus that hands each command to proc and emits
// the PROCESSED signal proc returns into sink.
type NewBus func(t *testing.T, proc command.Executor, sink command.Sink) Harness

// Run checks the buses newBus returns. Each case gets a fresh bus, and the
// cases run in parallel (t.Parallel).
func Run(t *testing.T, newBus NewBus) {
	t.Helper()
	cases := []kit.Case[NewBus]{
		{Name: "OrderPerAggregate", Run: orderPerAggregate},
		{Name: "BlockedAggregateDoesNotStopOthers", Run: blockedDoesNotStopOthers},
		{Name: "BackPressure", Run: backPressure},
		{Name: "Close", Run: closed},
		{Name: "NoLossOfAccepted", Run: noLoss},
	}
	kit.RunParallel(t, func(*testing.T) NewBus { return newBus }, cases)
}

// The kit's commands go to aggregates of this type.
var kitAggregate = factum.NamedAggregate{Context: "bustest", Aggregate: "item"}

// seqBody is the body of the kit's commands: the sender's sequence number.
type seqBody struct {
	Seq int `json:"seq"`
}

func newCommand(id string, seq int) *factum.Command {
	c := factum.NewCommand(kitAggregate.WithID(id).WithTenant(factum.DefaultTenant), seqBody{Seq: seq})
	c.Name = "kit_command"
	return &c
}

// seqOf returns the sequence number of a command, whether the bus handed
// over the Go value or its JSON encoding.
func seqOf(c *factum.Command) (int, error) {
	switch b := c.Body.(type) {
	case seqBody:
		return b.Seq, nil
	case *seqBody:
		return b.Seq, nil
	}
	var raw []byte
	switch b := c.Body.(type) {
	case json.RawMessage:
		raw = b
	case []byte:
		raw = b
	default:
		var err error
		if raw, err = json.Marshal(b); err != nil {
			return 0, fmt.Errorf("bustest: command body %T: %w", c.Body, err)
		}
	}
	var v seqBody
	if err := json.Unmarshal(raw, &v); err != nil {
		return 0, fmt.Errorf("bustest: command body %T: %w", c.Body, err)
	}
	return v.Seq, nil
}

// recorder is the kit's processor and sink: it records what it processed,
// per aggregate, and checks that one aggregate is never processed twice at
// once.
type recorder struct {
	t       *testing.T
	mu      sync.Mutex
	order   map[string][]int // aggregate ID -> sequence numbers processed
	times   map[string]int   // command ID -> times processed
	signals map[string]int   // command ID -> PROCESSED signals seen
	busy    map[string]bool  // aggregate ID -> being processed
	block   map[string]chan struct{}
	started chan string // aggregate IDs whose command started
	errs    []string
}

func newRecorder(t *testing.T) *recorder {
	return &recorder{t: t, order: map[string][]int{}, times: map[string]int{}, signals: map[string]int{},
		busy: map[string]bool{}, block: map[string]chan struct{}{}, started: make(chan string, 1<<16)}
}

func (r *recorder) Process(ctx context.Context, c *factum.Command) factum.Signal {
	id := c.AggregateID.ID
	seq, err := seqOf(c)
	r.mu.Lock()
	if err != nil {
		r.errs = append(r.errs, err.Error())
	}
	if r.busy[id] {
		r.errs = append(r.errs, fmt.Sprintf("aggregate %s processed two commands at once", id))
	}
	r.busy[id] = true
	gate := r.block[id]
	r.mu.Unlock()
	r.started <- id
	if gate != nil {
		select {
		case <-gate:
		case <-ctx.Done():
		}
	}
	r.mu.Lock()
	r.busy[id] = false
	r.order[id] = append(r.order[id], seq)
	r.times[c.ID]++
	r.mu.Unlock()
	return factum.Signal{CommandID: c.ID, RequestID: c.RequestIDOrID(), Stage: factum.StageProcessed,
		AggregateID: c.AggregateID, Code: factum.CodeOk, SignalTime: time.Now()}
}

func (r *recorder) Signal(s factum.Signal) {
	r.mu.Lock()
	r.signals[s.CommandID]++
	r.mu.Unlock()
}

// blockAggregate makes the processing of id's commands wait until the
// returned function is called.
func (r *recorder) blockAggregate(id string) (release func()) {
	ch := make(chan struct{})
	r.mu.Lock()
	r.block[id] = ch
	r.mu.Unlock()
	var once sync.Once
	return func() { once.Do(func() { close(ch) }) }
}

func (r *recorder) check() {
	r.t.Helper()
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, e := range r.errs {
		r.t.Error(e)
	}
}

// waitFor polls cond until it holds or a generous deadline passes: the
// kit asserts outcomes, not speed.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("bustest: timed out waiting for %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

func shutdown(t *testing.T, h Harness) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := h.Shutdown(ctx); err != nil {
		t.Fatalf("bustest: Shutdown: %v", err)
	}
}

// sendPatiently sends c, trying again while the bus pushes back: a refused
// command was not accepted, so sending it again keeps the order.
func sendPatiently(bus command.Bus, c *factum.Command) error {
	for {
		err := bus.Send(context.Background(), c)
		if factum.CodeOf(err) != factum.CodeTooManyRequests {
			return err
		}
		time.Sleep(time.Millisecond)
	}
}

func orderPerAggregate(t *testing.T, newBus NewBus) {
	r := newRecorder(t)
	h := newBus(t, r, r)
	const aggregates, per = 8, 100
	var wg sync.WaitGroup
	for a := range aggregates {
		wg.Go(func() {
			for i := range per {
				if err := sendPatiently(h.Bus, newCommand(fmt.Sprintf("a-%d", a), i)); err != nil {
					t.Errorf("Send: %v", err)
					return
				}
			}
		})
	}
	wg.Wait()
	shutdown(t, h)
	r.check()
	r.mu.Lock()
	defer r.mu.Unlock()
	for a := range aggregates {
		got := r.order[fmt.Sprintf("a-%d", a)]
		if len(got) != per {
			t.Fatalf("aggregate a-%d: %d commands processed, want %d", a, len(got), per)
		}
		for i, seq := range got {
			if seq != i {
				t.Fatalf("aggregate a-%d: command %d processed at position %d: out of order (%v)", a, seq, i, got[:i+1])
			}
		}
	}
}

func blockedDoesNotStopOthers(t *testing.T, newBus NewBus) {
	r := newRecorder(t)
	h := newBus(t, r, r)
	release := r.blockAggregate("blocked")
	defer release()
	if err := h.Bus.Send(context.Background(), newCommand("blocked", 0)); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the blocked command to start", func() bool {
		for {
			select {
			case id := <-r.started:
				if id == "blocked" {
					return true
				}
			default:
				return false
			}
		}
	})
	// Of several other aggregates, some share no lane or partition with
	// the blocked one on any reasonable bus.
	for i := range 16 {
		// Those that share the blocked one's lane may be pushed back.
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
		err := h.Bus.Send(ctx, newCommand(fmt.Sprintf("free-%d", i), 0))
		cancel()
		if err != nil && factum.CodeOf(err) != factum.CodeTooManyRequests {
			t.Fatal(err)
		}
	}
	waitFor(t, "a command of another aggregate to be processed", func() bool {
		r.mu.Lock()
		defer r.mu.Unlock()
		for i := range 16 {
			if len(r.order[fmt.Sprintf("free-%d", i)]) > 0 {
				return true
			}
		}
		return false
	})
	release()
	shutdown(t, h)
	r.check()
}

func backPressure(t *testing.T, newBus NewBus) {
	r := newRecorder(t)
	h := newBus(t, r, r)
	if h.Capacity <= 0 {
		t.Fatalf("bustest: Harness.Capacity is %d: a bus must be bounded", h.Capacity)
	}
	release := r.blockAggregate("hot")
	defer release()
	accepted, refused := 0, 0
	for i := range h.Capacity + 16 {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
		err := h.Bus.Send(ctx, newCommand("hot", i))
		cancel()
		switch {
		case err == nil:
			accepted++
		case factum.CodeOf(err) == factum.CodeTooManyRequests:
			refused++
		default:
			t.Fatalf("a send to a full bus failed with %s (%v), want TooManyRequests", factum.CodeOf(err), err)
		}
	}
	if refused == 0 {
		t.Fatalf("%d commands accepted for one blocked aggregate with capacity %d: the bus is unbounded", accepted, h.Capacity)
	}
	// One command may be in progress besides those waiting.
	if accepted > h.Capacity+1 {
		t.Fatalf("%d commands accepted, more than the capacity %d and the one in progress", accepted, h.Capacity)
	}
	release()
	shutdown(t, h)
	r.check()
	r.mu.Lock()
	defer r.mu.Unlock()
	if got := len(r.order["hot"]); got != accepted {
		t.Fatalf("%d commands processed, %d accepted", got, accepted)
	}
}

func closed(t *testing.T, newBus NewBus) {
	r := newRecorder(t)
	h := newBus(t, r, r)
	if err := h.Bus.Send(context.Background(), newCommand("c", 0)); err != nil {
		t.Fatal(err)
	}
	shutdown(t, h)
	err := h.Bus.Send(context.Background(), newCommand("c", 1))
	if factum.CodeOf(err) != factum.CodeTooManyRequests {
		t.Fatalf("a send after Shutdown: %v, want TooManyRequests", err)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if got := r.order["c"]; len(got) != 1 {
		t.Fatalf("processed %v, want only the command accepted before Shutdown", got)
	}
}

func noLoss(t *testing.T, newBus NewBus) {
	r := newRecorder(t)
	h := newBus(t, r, r)
	const senders, per = 8, 200
	var acceptedMu sync.Mutex
	accepted := map[string]bool{}
	var sentSome sync.WaitGroup
	sentSome.Add(senders)
	var stop atomic.Bool
	var wg sync.WaitGroup
	for s := range senders {
		wg.Go(func() {
			for i := range per {
				if i == per/4 {
					sentSome.Done()
				}
				c := newCommand(fmt.Sprintf("n-%d", (s*per+i)%32), i)
				err := h.Bus.Send(context.Background(), c)
				switch {
				case err == nil:
					acceptedMu.Lock()
					accepted[c.ID] = true
					acceptedMu.Unlock()
				case factum.CodeOf(err) == factum.CodeTooManyRequests:
					stop.Store(true)
				default:
					t.Errorf("Send: %v", err)
				}
			}
		})
	}
	sentSome.Wait()
	shutdown(t, h) // while senders are still busy
	wg.Wait()
	r.check()
	r.mu.Lock()
	defer r.mu.Unlock()
	for id := range accepted {
		if r.times[id] != 1 {
			t.Fatalf("accepted command %s processed %d times, want 1", id, r.times[id])
		}
		if r.signals[id] != 1 {
			t.Fatalf("accepted command %s: %d PROCESSED signals, want 1", id, r.signals[id])
		}
	}
	for id, n := range r.times {
		if !accepted[id] {
			t.Fatalf("command %s processed %d times but its Send failed", id, n)
		}
	}
	if !stop.Load() && len(accepted) != senders*per {
		t.Fatalf("%d of %d accepted, yet no send was refused", len(accepted), senders*per)
	}
}
