package event_test

import (
	"context"
	"maps"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/event"
)

// ledger records what the instances of a lease test do, each under the
// tenure it holds (its lease's token): the leases they take, the streams
// they handle, and the fenced saves the store accepts. A handling counts
// when a save under its tenure covered it: that is what the token fences,
// as it fences an effect committed with the checkpoint. What it does not
// fence may repeat, and check allows it: a stream in hand when the lease
// lapses still finishes (a stalled process runs even a short handler past
// the lapse), and the next holder is given it again, with every stream
// handled since the last accepted save.
type ledger struct {
	mu        sync.Mutex
	acquired  map[uint64]tenure // by token
	handlings []handling
	saved     map[uint64][2]factum.Position // by token: the lowest and highest accepted save
}

// tenure is one lease granted to holder, recorded after it was granted.
type tenure struct {
	holder string
	at     time.Time
}

// handling is one delivery of a stream to the function, recorded around
// it by the instance's outermost middleware: before the consumer checks
// its lease for the next stream and before it saves past the stream.
type handling struct {
	token      uint64
	holder     string
	stream     string
	pos        factum.Position
	start, end time.Time
}

func newLedger() *ledger {
	return &ledger{acquired: map[uint64]tenure{}, saved: map[uint64][2]factum.Position{}}
}

// instance returns the lease store and the middleware of an instance named
// holder that takes its leases from ls, recording into the ledger.
func (l *ledger) instance(holder string, ls event.LeaseStore) (event.LeaseStore, event.Middleware) {
	in := &ledgerLeases{LeaseStore: ls, l: l, holder: holder}
	mw := func(h *event.Handler, next event.StreamFunc) event.StreamFunc {
		return func(ctx context.Context, s *factum.EventStream) error {
			start := time.Now()
			err := next(ctx, s)
			l.handled(handling{token: in.token.Load(), holder: holder, stream: s.ID, pos: s.Position, start: start, end: time.Now()})
			return err
		}
	}
	return in, mw
}

// ledgerLeases records the leases an instance is granted and the saves
// the store accepts from it; the instance's handlings run under the token
// of its last grant, as a consumer handles streams only under the lease it
// holds.
type ledgerLeases struct {
	event.LeaseStore
	l      *ledger
	holder string
	token  atomic.Uint64
}

func (s *ledgerLeases) Acquire(ctx context.Context, g factum.Function, h string, ttl time.Duration) (event.Lease, error) {
	le, err := s.LeaseStore.Acquire(ctx, g, h, ttl)
	if err == nil {
		s.token.Store(le.Token)
		s.l.mu.Lock()
		s.l.acquired[le.Token] = tenure{holder: s.holder, at: time.Now()}
		s.l.mu.Unlock()
	}
	return le, err
}

func (s *ledgerLeases) SaveFencedCheckpoint(ctx context.Context, le event.Lease, pos factum.Position) error {
	err := s.LeaseStore.SaveFencedCheckpoint(ctx, le, pos)
	if err == nil {
		s.l.mu.Lock()
		r, ok := s.l.saved[le.Token]
		if !ok || pos.Less(r[0]) {
			r[0] = pos
		}
		if r[1].Less(pos) {
			r[1] = pos
		}
		s.l.saved[le.Token] = r
		s.l.mu.Unlock()
	}
	return err
}

func (l *ledger) handled(h handling) {
	l.mu.Lock()
	l.handlings = append(l.handlings, h)
	l.mu.Unlock()
}

// counts reports whether an accepted save of h's tenure covered h.
// l.mu must be held.
func (l *ledger) counts(h handling) bool {
	r, ok := l.saved[h.token]
	return ok && !r[1].Less(h.pos)
}

// counted returns how many handlings of each stream count.
func (l *ledger) counted() map[string]int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := map[string]int{}
	for _, h := range l.handlings {
		if l.counts(h) {
			n[h.stream]++
		}
	}
	return n
}

// waitCounted waits up to 30 s for a handling of each of ids to count;
// check then says what is missing.
func (l *ledger) waitCounted(ids []string) {
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		n := l.counted()
		if !slices.ContainsFunc(ids, func(id string) bool { return n[id] == 0 }) {
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// check asserts what the fenced lease promises, however the instances
// were scheduled: each stream's handling counts exactly once; the
// checkpoint never moves back from one tenure to the next; a tenure
// finishes at most the stream in hand once a later tenure began (its
// holder starts no stream once its lease could lapse, which is before the
// store grants it again); and that stream does not count (the store
// refuses the old tenure's saves once it granted a new one).
func (l *ledger) check(t *testing.T, ids []string) {
	t.Helper()
	n := l.counted()
	l.mu.Lock()
	defer l.mu.Unlock()
	times := map[string]int{}
	for _, h := range l.handlings {
		times[h.stream]++
	}
	for _, id := range ids {
		if n[id] != 1 {
			t.Errorf("stream %s counted %d times (handled %d times), want once", id, n[id], times[id])
		}
	}
	tokens := slices.Sorted(maps.Keys(l.saved))
	for i := 1; i < len(tokens); i++ {
		if before, after := l.saved[tokens[i-1]][1], l.saved[tokens[i]][0]; after.Less(before) {
			t.Errorf("tenure %d saved %v after tenure %d saved %v: the checkpoint moved back", tokens[i], after, tokens[i-1], before)
		}
	}
	// laterBegan reports whether a tenure after h's began before h ended.
	laterBegan := func(h handling) bool {
		for k, ten := range l.acquired {
			if k > h.token && ten.at.Before(h.end) {
				return true
			}
		}
		return false
	}
	late := map[uint64]int{} // by token: handlings that ended after a later tenure began
	for _, h := range l.handlings {
		if !laterBegan(h) {
			continue
		}
		late[h.token]++
		if l.counts(h) {
			t.Errorf("%s's handling of stream %s under tenure %d counts, but it ended after a later tenure began", h.holder, h.stream, h.token)
		}
	}
	for k, n := range late {
		if n > 1 {
			t.Errorf("%s handled %d streams under tenure %d after a later tenure began, want at most the one in hand", l.acquired[k].holder, n, k)
		}
	}
}

// handledBy returns how many handlings holder made.
func (l *ledger) handledBy(holder string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for _, h := range l.handlings {
		if h.holder == holder {
			n++
		}
	}
	return n
}

// holders returns who handled stream, sorted.
func (l *ledger) holders(stream string) []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var names []string
	for _, h := range l.handlings {
		if h.stream == stream {
			names = append(names, h.holder)
		}
	}
	slices.Sort(names)
	return names
}
