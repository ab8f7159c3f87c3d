package sqlstore

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/eventstore"
)

// appenderProbe is a flush that records, for each aggregate, the size of
// its batch and how many batches were being written when that batch
// started; a batch holding an aggregate of hold waits until that
// aggregate's channel closes, and announces itself on started.
type appenderProbe struct {
	mu      sync.Mutex
	running int
	starts  map[string][2]int // aggregate -> its batch's size, batches running at the start
	started chan string
	hold    map[string]chan struct{}
}

func (p *appenderProbe) flush(_ struct{}, batch []*AppendRequest) []*AppendRequest {
	var release chan struct{}
	p.mu.Lock()
	for _, r := range batch {
		id := r.Row.AggregateID
		p.starts[id] = [2]int{len(batch), p.running}
		if h := p.hold[id]; h != nil {
			release = h
		}
	}
	p.running++
	p.mu.Unlock()
	if release != nil {
		p.started <- batch[0].Row.AggregateID
		<-release
	}
	p.mu.Lock()
	p.running--
	p.mu.Unlock()
	for _, r := range batch {
		r.Done <- AppendResult{Outcome: eventstore.Appended}
	}
	return nil
}

func (p *appenderProbe) start(id string) [2]int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.starts[id]
}

// A batch starts beside one in flight only once the queue holds as many
// requests as the last batch started: one append arriving while a batch of
// four is written waits for it rather than taking the idle writer for a
// statement of its own.
func TestAppenderWaitsForABatchWorthASecondWriter(t *testing.T) {
	p := &appenderProbe{starts: map[string][2]int{}, started: make(chan string, 8), hold: map[string]chan struct{}{
		"a0": make(chan struct{}), "a1": make(chan struct{}), "a2": make(chan struct{}),
	}}
	d := &Dialect{Name: "test", CheckText: func(string, string) error { return nil }}
	a := NewAppender(d, errors.New("closed"), []struct{}{{}, {}}, 64, true, p.flush)
	t.Cleanup(func() { a.Close(nil) })
	ctx := context.Background()
	named := factum.NamedAggregate{Context: "c", Aggregate: "cart"}
	appended := make(chan error, 8)
	appendAsync := func(ids ...string) {
		for _, id := range ids {
			go func() {
				s := factum.EventStream{ID: "s-" + id, AggregateID: named.WithID(id), Version: 1, CreateTime: time.Now(), Events: []factum.DomainEvent{{ID: "e-" + id, Name: "x", Sequence: 1, IsLast: true, Body: []byte(`{}`)}}}
				_, err := a.Append(ctx, &s)
				appended <- err
			}()
		}
	}
	waitQueued := func(n int) {
		for a.Queued() != n {
			time.Sleep(time.Millisecond)
		}
	}

	// Both writers busy with a batch of one each; four more wait.
	appendAsync("a0")
	<-p.started
	appendAsync("a1")
	<-p.started
	appendAsync("a2", "a3", "a4", "a5")
	waitQueued(4)
	// The first writer finishing takes the four in one batch (the queue
	// holds more than the last batch started).
	p.mu.Lock()
	for _, id := range []string{"a3", "a4", "a5"} {
		p.hold[id] = p.hold["a2"]
	}
	p.mu.Unlock()
	close(p.hold["a1"])
	<-p.started
	if got := p.start("a2"); got[0] != 4 {
		t.Fatalf("the waiting appends went in a batch of %d, want 4", got[0])
	}
	close(p.hold["a0"])
	for range 2 {
		if err := <-appended; err != nil {
			t.Fatal(err)
		}
	}

	// One writer idle, a batch of four in flight: a lone append waits.
	appendAsync("b0")
	for a.Queued() != 1 && p.start("b0")[0] == 0 { // waiting, or (wrongly) written at once
		time.Sleep(time.Millisecond)
	}
	go func() { close(p.hold["a2"]) }()
	for range 5 {
		if err := <-appended; err != nil {
			t.Fatal(err)
		}
	}
	if got := p.start("b0"); got[1] != 0 {
		t.Errorf("a lone append started a batch of %d beside %d in flight, want it to wait for the batch in flight", got[0], got[1])
	}
}
