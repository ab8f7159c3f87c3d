package eventstore

import (
	"context"
	"errors"
	"slices"
	"sort"
	"sync"
	"sync/atomic"

	"github.com/factum-go/factum"
)

// DefaultTailStreams is how many of the log's latest streams, by default,
// the front end keeps for its readers (Config.TailStreams).
const DefaultTailStreams = 1024

// tail is the front end's shared view of the log's end. Every consumer
// group of a process reads the same new streams right after each append;
// without it each group's read went to the backend and decoded the same
// rows again (four groups in the example service: four reads, and on
// PostgreSQL four waits, per append).
//
// It rests on what ReadLog guarantees: a page read after position p that
// ends at position q holds every stream the log will ever hold in (p, q]
// (a reader reading on from q never skips one). So the pages the backend
// returns are facts about the log, and tail keeps the latest of them
// joined into one range (lo, hi] with all its streams. A read after a
// position in [lo, hi) that the range fills is answered from it; a read at
// hi (a reader at the end) goes to the backend, and followers (see
// Following) arriving at hi while such a read is in flight wait for it and
// share its page. Streams beyond hi, appended here or by another process,
// are only ever found by a backend read, so nothing is skipped, and pages
// are complete ranges, so nothing is seen twice by a reader reading on
// from its last position.
//
// Readers get their own slice of the streams; the streams themselves (their
// events and headers) are shared, as the memory store shares them: readers
// treat them as read-only.
type tail struct {
	max int // streams kept at most; 0 disables

	// appends counts the appends through the front end that have
	// returned; a read that reached the log's end shows every one counted
	// before it began.
	appends atomic.Uint64

	mu      sync.Mutex
	valid   bool
	endOf   uint64               // the range reached the log's end when appends was endOf-1; 0: not known
	lo      factum.Position      // streams holds every stream of the log in (lo, hi]
	streams []factum.EventStream // ascending; hi is the last one's position
	flight  *tailRead            // a backend read after hi in progress, or nil
}

// tailRead is one backend read that readers at the same position share.
type tailRead struct {
	after factum.Position
	limit int
	seen  uint64               // appends when the read began
	done  chan struct{}        // closed when page and err are set
	page  []factum.EventStream // shared: readers copy what they take
	err   error
}

// hi returns the position of the last stream held; the caller holds mu and
// the tail is valid.
func (t *tail) hi() factum.Position { return t.streams[len(t.streams)-1].Position }

// ahead reports whether the log is known to hold a stream after position
// after.
func (t *tail) ahead(after factum.Position) bool {
	if t.max == 0 {
		return false
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.valid && after.Less(t.hi())
}

// served returns up to limit streams after position after from the held
// range, or nil when after is outside [lo, hi); the caller holds mu.
func (t *tail) served(after factum.Position, limit int) []factum.EventStream {
	if !t.valid || after.Less(t.lo) || !after.Less(t.hi()) {
		return nil
	}
	i := sort.Search(len(t.streams), func(i int) bool { return after.Less(t.streams[i].Position) })
	return slices.Clone(t.streams[i:min(i+limit, len(t.streams))])
}

// appended counts an append through the front end that has returned.
func (t *tail) appended() { t.appends.Add(1) }

// record adds what a backend read of up to limit streams after position
// after returned, the read having begun when appends was seen; the caller
// holds mu. A page joining or overlapping the held range extends it; a
// page ahead of it (the readers moved past a gap in what was read here)
// replaces it; an older page is left out. A short page ending at the
// range's end says the log ended there when the read began.
func (t *tail) record(after factum.Position, page []factum.EventStream, limit int, seen uint64) {
	end := after
	if len(page) > 0 {
		end = page[len(page)-1].Position
	}
	short := len(page) < limit
	switch {
	case len(page) == 0:
		if t.valid && end == t.hi() && short {
			t.endOf = max(t.endOf, seen+1)
		}
		return
	case t.valid && !after.Less(t.lo) && !t.hi().Less(after):
		if !t.hi().Less(end) {
			if end == t.hi() && short {
				t.endOf = max(t.endOf, seen+1)
			}
			return
		}
		hi := t.hi()
		i := sort.Search(len(page), func(i int) bool { return hi.Less(page[i].Position) })
		t.streams = append(t.streams, page[i:]...)
	case !t.valid || t.hi().Less(end):
		t.lo, t.streams, t.valid = after, slices.Clone(page), true
	default:
		return
	}
	t.endOf = 0
	if short {
		t.endOf = seen + 1
	}
	if n := len(t.streams); n > t.max {
		drop := n - t.max
		t.lo = t.streams[drop-1].Position
		// Copy to a fresh array now and then, so that the dropped streams
		// are not held by the old one.
		if cap(t.streams) > 4*t.max {
			t.streams = slices.Clone(t.streams[drop:])
		} else {
			t.streams = t.streams[drop:]
		}
	}
}

type followingKey struct{}

// Following marks ctx as a follower's: a reader that reads on from its last
// position in a loop, as a consumer group does. A follower may be answered
// from what an earlier read found at the log's end: it takes the page of a
// shared read in flight at its position even when an append returned after
// that read began, and a page shorter than its limit from the held range
// when no append through the front end has returned since a read found the
// log ending there, though another process may have appended since. It
// finds those streams at its next read or wait. Other reads go to the
// backend for whatever the held range cannot prove, so they reflect every
// append that returned before they began, another process's included, as
// the backend's would.
func Following(ctx context.Context) context.Context {
	return context.WithValue(ctx, followingKey{}, true)
}

func following(ctx context.Context) bool {
	v, _ := ctx.Value(followingKey{}).(bool)
	return v
}

// flightLimit is the least a shared read asks for: what it finds beyond
// its own reader's limit serves the others.
const flightLimit = 256

// read answers ReadLog through the tail: a page from the held range when
// the range holds limit streams after the position; otherwise what the
// range holds followed by a backend read after its end, made at once. A
// follower (see Following) may also be answered with a shorter page from
// the range, when it reached the log's end as a read found it that began
// after every append through the front end had returned, and when such a
// backend read is in flight at its position, with that read's page.
func (t *tail) read(ctx context.Context, b Backend, after factum.Position, limit int) ([]factum.EventStream, error) {
	if t.max == 0 {
		return b.ReadLog(ctx, after, limit)
	}
	follower := following(ctx)
	t.mu.Lock()
	held := t.served(after, limit)
	if len(held) == limit || follower && len(held) > 0 && t.endOf == t.appends.Load()+1 {
		// limit streams of a whole range; or, for a follower, all the log
		// held when a read began after the last append through the front
		// end returned. Only a backend read can tell anyone else that no
		// other process appended since.
		t.mu.Unlock()
		return held, nil
	}
	at, need := after, limit
	if len(held) > 0 {
		at, need = t.hi(), limit-len(held)
	}
	if fl := t.flight; fl != nil && fl.after == at && follower {
		t.mu.Unlock()
		select {
		case <-fl.done:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		if fl.err == nil && (len(fl.page) < fl.limit || len(fl.page) >= need) {
			return join(held, fl.page[:min(need, len(fl.page))]), nil
		}
		// The shared read failed, or stopped short of this reader's limit
		// on a full page: read for itself.
		rest, err := t.readOwn(ctx, b, at, need, nil)
		return join(held, rest), err
	}
	var fl *tailRead
	if t.flight == nil && (!t.valid || at == t.hi()) {
		fl = &tailRead{after: at, limit: max(need, flightLimit), seen: t.appends.Load(), done: make(chan struct{})}
		t.flight = fl
	}
	t.mu.Unlock()
	rest, err := t.readOwn(ctx, b, at, need, fl)
	return join(held, rest), err
}

// join returns held followed by rest, the reader's own slice.
func join(held, rest []factum.EventStream) []factum.EventStream {
	if len(held) == 0 {
		return slices.Clone(rest)
	}
	return append(held, rest...)
}

// readOwn reads up to need streams after at from the backend and records
// the page; fl, if not nil, is the shared read it performs, which reads up
// to fl.limit for the readers that join it.
func (t *tail) readOwn(ctx context.Context, b Backend, at factum.Position, need int, fl *tailRead) ([]factum.EventStream, error) {
	limit := need
	if fl != nil {
		limit = fl.limit
	}
	seen := t.appends.Load()
	if fl != nil {
		seen = fl.seen
	}
	var (
		page []factum.EventStream
		err  = errSharedReadPanicked
	)
	// The page is recorded, and the shared read ends, however the read
	// does: were a read that panics (its caller may recover, as net/http
	// does) left in flight, it would hold its readers and every later one
	// at its position.
	defer t.land(at, limit, seen, fl, &page, &err)
	page, err = b.ReadLog(ctx, at, limit)
	if err != nil {
		return nil, err
	}
	return page[:min(need, len(page))], nil
}

// errSharedReadPanicked is a shared read's error, for the readers waiting
// for it, when its backend read panicked; they read for themselves.
var errSharedReadPanicked = errors.New("eventstore: the shared read panicked")

// land records the page a backend read of up to limit streams after at
// returned, unless it failed, and ends the shared read fl, if not nil, with
// the read's page and error: errSharedReadPanicked if the read did not
// return.
func (t *tail) land(at factum.Position, limit int, seen uint64, fl *tailRead, page *[]factum.EventStream, err *error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if *err == nil {
		t.record(at, *page, limit, seen)
	}
	if fl != nil {
		t.flight = nil
		fl.page, fl.err = *page, *err
		close(fl.done)
	}
}
