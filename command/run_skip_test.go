package command_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/command"
)

// holdingRuns is a RunExecutor whose runs hold their first command until
// the processing context ends (the shutdown deadline), then process the
// others in turn, asking skip first as ProcessRun does. A command of the
// aggregate "barrier" holds its lane until released.
type holdingRuns struct {
	started, release, entered chan struct{}
	mu                        sync.Mutex
	processed                 map[string]bool // by command ID
}

func (h *holdingRuns) Process(ctx context.Context, cmd *factum.Command) factum.Signal {
	if cmd.AggregateID.ID == "barrier" {
		h.started <- struct{}{}
		<-h.release
	}
	h.mu.Lock()
	h.processed[cmd.ID] = true
	h.mu.Unlock()
	return factum.Signal{CommandID: cmd.ID, Stage: factum.StageProcessed, Code: factum.CodeOk}
}

func (h *holdingRuns) TakesRuns() bool { return true }

func (h *holdingRuns) ProcessRun(ctx context.Context, cmds []*factum.Command, skip func(*factum.Command) (factum.Signal, bool), emit func(int, factum.Signal)) {
	for i, c := range cmds {
		if sig, ok := skip(c); ok {
			emit(i, sig)
			continue
		}
		if i == 0 {
			close(h.entered)
			<-ctx.Done()
		}
		emit(i, h.Process(ctx, c))
	}
}

// signals records the signals a sink receives, by command ID.
type signals struct {
	mu  sync.Mutex
	got map[string]factum.Signal
}

func (s *signals) Signal(sig factum.Signal) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.got[sig.CommandID] = sig
}

// Past the shutdown deadline, the commands of a run not yet started get
// the closed signal, as queued ones do, rather than being processed in
// the ended context.
func TestDispatcherRunSkipsPastDeadline(t *testing.T) {
	h := &holdingRuns{started: make(chan struct{}), release: make(chan struct{}), entered: make(chan struct{}), processed: map[string]bool{}}
	sink := &signals{got: map[string]factum.Signal{}}
	d, err := command.NewDispatcher(h, sink, command.DispatcherConfig{Lanes: 1})
	if err != nil {
		t.Fatal(err)
	}
	d.Start(t.Context())
	named := factum.NamedAggregate{Context: "shop", Aggregate: "cart"}
	send := func(id string, body int) *factum.Command {
		t.Helper()
		c := factum.NewCommand(named.WithID(id), body)
		if err := d.Send(t.Context(), &c); err != nil {
			t.Fatal(err)
		}
		return &c
	}
	send("barrier", 0)
	<-h.started
	// Queued behind the barrier, the lane takes them as one run.
	var cmds []*factum.Command
	for i := range 3 {
		cmds = append(cmds, send("a", i))
	}
	close(h.release)
	<-h.entered
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Millisecond)
	defer cancel()
	if err := d.Shutdown(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Shutdown past its deadline: %v", err)
	}
	for i, c := range cmds[1:] {
		sink.mu.Lock()
		sig := sink.got[c.ID]
		sink.mu.Unlock()
		h.mu.Lock()
		ran := h.processed[c.ID]
		h.mu.Unlock()
		if sig.Code != factum.CodeTooManyRequests || ran {
			t.Errorf("command %d of the run, not started at the deadline: %s (%s), processed: %v; want TooManyRequests, not processed", i+1, sig.Code, sig.Message, ran)
		}
	}
}
