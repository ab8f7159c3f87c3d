package eventstore

import (
	"context"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"

	"github.com/factum-go/factum"
)

// horizonLog is a backend log shaped like PostgreSQL's: appends take
// positions in order but commit in any order, and a read returns only the
// committed streams below the first uncommitted position (the horizon), so
// that reading on from the last position returned never skips a stream.
// Appends are made to it directly, as another process's would be, so the
// front end's tail learns of them only by reading.
type horizonLog struct {
	Backend // only ReadLog is used

	mu        sync.Mutex
	streams   []factum.EventStream // by position; Seq = index + 1
	committed []bool
	reads     atomic.Int64
}

// begin allocates the next position and returns it.
func (l *horizonLog) begin() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := len(l.streams)
	l.streams = append(l.streams, factum.EventStream{ID: factum.NewID(), Position: factum.Position{Seq: uint64(n + 1)}})
	l.committed = append(l.committed, false)
	return n
}

func (l *horizonLog) commit(i int) {
	l.mu.Lock()
	l.committed[i] = true
	l.mu.Unlock()
}

func (l *horizonLog) ReadLog(_ context.Context, after factum.Position, limit int) ([]factum.EventStream, error) {
	l.reads.Add(1)
	l.mu.Lock()
	defer l.mu.Unlock()
	out := []factum.EventStream{}
	for i := int(after.Seq); i < len(l.streams) && len(out) < limit; i++ {
		if !l.committed[i] {
			break // the horizon
		}
		out = append(out, l.streams[i])
	}
	return out, nil
}

// Readers reading on from their last position through the tail see every
// stream of the log exactly once and in order, while appends commit out of
// order and the tail keeps only a few streams: the pages it serves are
// ranges a backend read proved complete.
func TestTailReadersSeeEveryStreamOnce(t *testing.T) {
	for _, keep := range []int{1, 3, 64} {
		l := &horizonLog{}
		tl := &tail{max: keep}
		const appends, readers = 600, 5
		ctx := context.Background()
		var wg sync.WaitGroup
		wg.Go(func() {
			r := rand.New(rand.NewPCG(1, uint64(keep)))
			var open []int
			for n := 0; n < appends || len(open) > 0; {
				if n < appends && (len(open) == 0 || r.IntN(2) == 0) {
					open = append(open, l.begin())
					n++
					continue
				}
				k := r.IntN(len(open))
				l.commit(open[k])
				open = append(open[:k], open[k+1:]...)
			}
		})
		seen := make([][]factum.EventStream, readers)
		for i := range readers {
			wg.Go(func() {
				var pos factum.Position
				limit := 1 + i*7
				for len(seen[i]) < appends {
					page, err := tl.read(ctx, l, pos, limit)
					if err != nil {
						t.Error(err)
						return
					}
					if len(page) > limit {
						t.Errorf("reader %d: a page of %d streams, limit %d", i, len(page), limit)
					}
					seen[i] = append(seen[i], page...)
					if len(page) > 0 {
						pos = page[len(page)-1].Position
					}
				}
			})
		}
		wg.Wait()
		for i, got := range seen {
			if len(got) != appends {
				t.Fatalf("keep %d, reader %d: %d streams, want %d", keep, i, len(got), appends)
			}
			for k, s := range got {
				if s.Position.Seq != uint64(k+1) || s.ID != l.streams[k].ID {
					t.Fatalf("keep %d, reader %d: stream %d is at position %v, want seq %d", keep, i, k, s.Position, k+1)
				}
			}
		}
	}
}

// Followers at the end of the log share one backend read per append:
// those that arrive while it runs wait for it, those that arrive after it
// are answered from what it found.
func TestTailReadersAtTheEndShareOneRead(t *testing.T) {
	l := &horizonLog{}
	tl := &tail{max: DefaultTailStreams}
	ctx := Following(context.Background())
	const rounds, readers = 50, 8
	var pos factum.Position
	for round := range rounds {
		l.commit(l.begin())
		tl.appended()
		var wg sync.WaitGroup
		for range readers {
			wg.Go(func() {
				page, err := tl.read(ctx, l, pos, 256)
				if err != nil || len(page) != 1 || page[0].Position.Seq != uint64(round+1) {
					t.Errorf("round %d: %v, %v; want the stream at seq %d", round, page, err, round+1)
				}
			})
		}
		wg.Wait()
		pos = factum.Position{Seq: uint64(round + 1)}
	}
	if got := l.reads.Load(); got != rounds {
		t.Errorf("%d readers at the end over %d appends made %d backend reads, want %d", readers, rounds, got, rounds)
	}
}

// The tail keeps the latest range the reads found: an older page (a reader
// catching up) leaves it, a page joining it extends it, a page ahead of it
// replaces it, and it never holds more than its bound.
func TestTailRecord(t *testing.T) {
	s := func(seqs ...uint64) []factum.EventStream {
		out := make([]factum.EventStream, len(seqs))
		for i, q := range seqs {
			out[i].Position.Seq = q
		}
		return out
	}
	p := func(q uint64) factum.Position { return factum.Position{Seq: q} }
	tests := []struct {
		name     string
		pages    []factum.Position // after of each page
		contents [][]factum.EventStream
		lo, hi   uint64
	}{
		{"first page", []factum.Position{p(3)}, [][]factum.EventStream{s(4, 5)}, 3, 5},
		{"joining page", []factum.Position{p(3), p(5)}, [][]factum.EventStream{s(4, 5), s(6, 7)}, 3, 7},
		{"overlapping page", []factum.Position{p(3), p(4)}, [][]factum.EventStream{s(4, 5), s(5, 6)}, 3, 6},
		{"older page", []factum.Position{p(3), p(0)}, [][]factum.EventStream{s(4, 5), s(1, 2)}, 3, 5},
		{"page ahead", []factum.Position{p(3), p(7)}, [][]factum.EventStream{s(4, 5), s(8)}, 7, 8},
		{"bounded", []factum.Position{p(0), p(3)}, [][]factum.EventStream{s(1, 2, 3), s(4, 5, 6)}, 2, 6},
		{"empty page", []factum.Position{p(3), p(5)}, [][]factum.EventStream{s(4, 5), s()}, 3, 5},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tl := &tail{max: 4}
			for i, after := range tt.pages {
				tl.record(after, tt.contents[i], 10, 0)
			}
			if tl.lo != p(tt.lo) || tl.hi() != p(tt.hi) {
				t.Fatalf("holds (%v, %v], want (%d, %d]", tl.lo, tl.hi(), tt.lo, tt.hi)
			}
			for i, st := range tl.streams {
				if st.Position.Seq != tt.lo+uint64(i)+1 {
					t.Fatalf("stream %d at %v: the range (%d, %d] is not whole", i, st.Position, tt.lo, tt.hi)
				}
			}
			if got := tl.served(p(tt.hi), 10); got != nil {
				t.Errorf("a read at the end was served %v from the tail; it must go to the backend", got)
			}
			if got := tl.served(p(tt.lo), 1); len(got) != 1 || got[0].Position != p(tt.lo+1) {
				t.Errorf("a read at the start with limit 1: %v, want the stream at seq %d", got, tt.lo+1)
			}
		})
	}
}

// WaitLog returns at once when a read found a stream after the position,
// without asking the backend.
func TestFrontWaitLogReturnsForStreamsTheTailHolds(t *testing.T) {
	l := &horizonLog{}
	l.commit(l.begin())
	f, err := New(l, Config{})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if page, err := f.ReadLog(ctx, factum.Position{}, 1); err != nil || len(page) != 1 {
		t.Fatalf("ReadLog: %v, %v", page, err)
	}
	reads := l.reads.Load()
	if err := f.WaitLog(ctx, factum.Position{}); err != nil {
		t.Fatalf("WaitLog: %v", err)
	}
	if got := l.reads.Load(); got != reads {
		t.Errorf("WaitLog read the backend %d times for a stream the tail holds", got-reads)
	}
}

// gatedLog holds its first read until gate is closed: a read that returns
// holds after it found its page; one that panics holds before it panics.
type gatedLog struct {
	*horizonLog
	panics  bool
	first   atomic.Bool
	entered chan struct{}
	gate    chan struct{}
}

func newGatedLog(panics bool) *gatedLog {
	return &gatedLog{horizonLog: &horizonLog{}, panics: panics, entered: make(chan struct{}), gate: make(chan struct{})}
}

func (g *gatedLog) ReadLog(ctx context.Context, after factum.Position, limit int) ([]factum.EventStream, error) {
	if !g.first.CompareAndSwap(false, true) {
		return g.horizonLog.ReadLog(ctx, after, limit)
	}
	if g.panics {
		close(g.entered)
		<-g.gate
		panic("backend read panicked")
	}
	page, err := g.horizonLog.ReadLog(ctx, after, limit)
	close(g.entered)
	<-g.gate
	return page, err
}

// readAsync reads the log through the tail from its start in a goroutine
// and sends the page it returns.
func readAsync(ctx context.Context, tl *tail, l Backend) <-chan []factum.EventStream {
	got := make(chan []factum.EventStream, 1)
	go func() {
		page, _ := tl.read(ctx, l, factum.Position{}, 10)
		got <- page
	}()
	return got
}

// A reader arriving while a shared read that began before an append
// returned is still in flight: a reader that appended finds its append,
// reading for itself rather than take that read's older page; a follower
// (a consumer group) takes the page, the backend read once for both, and
// finds the append at its next read.
func TestTailReaderArrivingDuringASharedReadAfterAnAppend(t *testing.T) {
	for _, tc := range []struct {
		name   string
		ctx    context.Context
		shares bool // the arriving reader takes the shared read's page
	}{
		{"a reader finds its own append", context.Background(), false},
		{"a follower shares an older read", Following(context.Background()), true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				g := newGatedLog(false)
				tl := &tail{max: DefaultTailStreams}
				go func() { _, _ = tl.read(tc.ctx, g, factum.Position{}, 10) }()
				<-g.entered // the shared read found the log empty and is held
				g.commit(g.begin())
				tl.appended()
				got := readAsync(tc.ctx, tl, g)
				synctest.Wait()
				close(g.gate)
				page := <-got
				if !tc.shares {
					if len(page) != 1 {
						t.Fatalf("the reader's own append is missing: %v", page)
					}
					return
				}
				if len(page) != 0 {
					t.Fatalf("the follower read for itself: %v", page)
				}
				if n := g.reads.Load(); n != 1 {
					t.Errorf("backend reads: %d, want 1", n)
				}
				if page, _ := tl.read(tc.ctx, g, factum.Position{}, 10); len(page) != 1 {
					t.Errorf("the follower's next read: %v, want the append", page)
				}
			})
		})
	}
}

// A shared read whose backend read panics (and whose caller recovers, as
// net/http does for a handler) ends: the readers waiting for it read for
// themselves, and later readers are not left waiting for it.
func TestTailSharedReadThatPanicsEnds(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := newGatedLog(true)
		p.commit(p.begin())
		tl := &tail{max: DefaultTailStreams}
		ctx := Following(context.Background())
		go func() {
			defer func() { _ = recover() }()
			_, _ = tl.read(ctx, p, factum.Position{}, 10)
		}()
		<-p.entered
		got := readAsync(ctx, tl, p)
		synctest.Wait()
		close(p.gate)
		if page := <-got; len(page) != 1 {
			t.Fatalf("the waiting reader read %v, want the one stream", page)
		}
		if page, err := tl.read(ctx, p, factum.Position{}, 10); err != nil || len(page) != 1 {
			t.Fatalf("a later read: %v (%v), want the one stream", page, err)
		}
	})
}

// A stream another process appended after a read found the log's end
// (the backend gets it directly, not through the tail) is in the page of
// every later read that is not a follower's: neither the short page the
// tail holds nor a shared read that began before the append answers it.
// A follower may take either, and finds the stream at its next read.
func TestTailReadSeesAnotherProcessesAppend(t *testing.T) {
	t.Run("held short page", func(t *testing.T) {
		for _, tc := range []struct {
			name string
			ctx  context.Context
			want int // streams in the second read's page
		}{
			{"reader", context.Background(), 4},
			{"follower", Following(context.Background()), 3},
		} {
			t.Run(tc.name, func(t *testing.T) {
				l := &horizonLog{}
				tl := &tail{max: DefaultTailStreams}
				for range 3 {
					l.commit(l.begin())
				}
				if page, err := tl.read(tc.ctx, l, factum.Position{}, 10); err != nil || len(page) != 3 {
					t.Fatalf("first read: %v, %v; want 3 streams", page, err)
				}
				l.commit(l.begin()) // another process's append
				page, err := tl.read(tc.ctx, l, factum.Position{}, 10)
				if err != nil || len(page) != tc.want {
					t.Fatalf("read after another process appended: %d streams (%v); want %d", len(page), err, tc.want)
				}
				if page, _ := tl.read(tc.ctx, l, factum.Position{Seq: 3}, 10); len(page) != 1 {
					t.Fatalf("read on from the held range's end: %v, want the append", page)
				}
			})
		}
	})
	t.Run("shared read in flight", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			g := newGatedLog(false)
			tl := &tail{max: DefaultTailStreams}
			go func() { _, _ = tl.read(Following(context.Background()), g, factum.Position{}, 10) }()
			<-g.entered         // the shared read found the log empty and is held
			g.commit(g.begin()) // another process's append
			got := readAsync(context.Background(), tl, g)
			synctest.Wait()
			close(g.gate)
			if page := <-got; len(page) != 1 {
				t.Fatalf("a reader arriving after another process's append: %v, want the append", page)
			}
		})
	})
}
