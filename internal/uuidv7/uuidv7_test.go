package uuidv7

import (
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
)

func TestGeneratorFormat(t *testing.T) {
	var g Generator
	before := time.Now().Add(-time.Millisecond)
	ids := make([]string, 5)
	g.Fill(ids)
	ids = append(ids, g.New())
	after := time.Now().Add(time.Millisecond)
	for _, id := range ids {
		u, err := uuid.Parse(id)
		if err != nil {
			t.Fatalf("%q does not parse: %v", id, err)
		}
		if u.Version() != 7 || u.Variant() != uuid.RFC4122 {
			t.Fatalf("%s: version %d variant %v, want 7 and RFC 4122", id, u.Version(), u.Variant())
		}
		if u.String() != id {
			t.Fatalf("%q is not in canonical form (%s)", id, u)
		}
		sec, nsec := u.Time().UnixTime()
		if at := time.Unix(sec, nsec); at.Before(before) || at.After(after) {
			t.Fatalf("%s carries time %v, outside [%v, %v]", id, at, before, after)
		}
	}
}

// TestGeneratorConcurrentUnique makes IDs from many goroutines at once,
// singly and in batches: all must differ, and each goroutine's must
// increase.
func TestGeneratorConcurrentUnique(t *testing.T) {
	var g Generator
	const workers, perWorker = 32, 4000
	out := make([][]string, workers)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			ids := make([]string, 0, perWorker)
			for len(ids) < perWorker {
				if n := 1 + len(ids)%5; w%2 == 0 && len(ids)+n <= perWorker {
					batch := make([]string, n)
					g.Fill(batch)
					ids = append(ids, batch...)
				} else {
					ids = append(ids, g.New())
				}
			}
			out[w] = ids
		})
	}
	wg.Wait()
	seen := make(map[string]bool, workers*perWorker)
	for w, ids := range out {
		for i, id := range ids {
			if seen[id] {
				t.Fatalf("worker %d: ID %s handed out twice", w, id)
			}
			seen[id] = true
			if i > 0 && id <= ids[i-1] {
				t.Fatalf("worker %d: ID %s does not sort after the previous one %s", w, id, ids[i-1])
			}
		}
	}
}

// TestGeneratorCounterCarries pins the clock: the counter runs past 4,096
// in one millisecond and carries into the timestamp, and a clock that
// steps back does not make IDs repeat or go backwards.
func TestGeneratorCounterCarries(t *testing.T) {
	ms := int64(1_700_000_000_000)
	g := &Generator{clock: func() int64 { return ms }}
	prev := ""
	check := func(id string) {
		t.Helper()
		if id <= prev {
			t.Fatalf("ID %s does not sort after %s", id, prev)
		}
		prev = id
	}
	for range 10_000 {
		check(g.New())
	}
	if got := timestampMillis(t, prev); got != ms+2 {
		t.Fatalf("after 10,000 IDs in one millisecond the timestamp is %d ms, want the counter carried to %d", got, ms+2)
	}
	ms -= 60_000 // the clock steps back a minute
	for range 100 {
		check(g.New())
	}
	ms += 120_000 // and forward again: IDs follow the clock
	id := g.New()
	check(id)
	if got := timestampMillis(t, id); got != ms {
		t.Fatalf("timestamp = %d ms, want the clock's %d", got, ms)
	}
}

func TestGeneratorFillAt(t *testing.T) {
	var g Generator
	at := time.UnixMilli(1_800_000_000_123)
	ids := make([]string, 3)
	g.FillAt(ids, at)
	for i, id := range ids {
		if got := timestampMillis(t, id); got != at.UnixMilli() {
			t.Fatalf("ID %d carries %d ms, want %d", i, got, at.UnixMilli())
		}
	}
	// An earlier time cannot make IDs go backwards.
	early := g.New()
	if early <= ids[2] {
		t.Fatalf("ID %s made at the clock's time sorts before %s made for a later time", early, ids[2])
	}
	// Times outside the 48-bit field are clamped, not wrapped.
	var h Generator
	h.FillAt(ids[:1], time.Unix(-100, 0))
	if got := timestampMillis(t, ids[0]); got != 0 {
		t.Fatalf("a time before 1970 gives %d ms, want 0", got)
	}
}

// TestGeneratorRandomTail checks that two generators on the same clock
// tick still make different IDs: the 62 low bits are random.
func TestGeneratorRandomTail(t *testing.T) {
	clock := func() int64 { return 1_700_000_000_000 }
	a, b := &Generator{clock: clock}, &Generator{clock: clock}
	seen := map[string]bool{}
	for range 1000 {
		for _, id := range []string{a.New(), b.New()} {
			if seen[id[19:]] {
				t.Fatalf("random tail of %s repeated", id)
			}
			seen[id[19:]] = true
		}
	}
}

func timestampMillis(t *testing.T, id string) int64 {
	t.Helper()
	u := uuid.MustParse(id)
	var ms int64
	for _, c := range u[:6] {
		ms = ms<<8 | int64(c)
	}
	return ms
}

func BenchmarkGenerator(b *testing.B) {
	var g Generator
	b.Run("New", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			_ = g.New()
		}
	})
	b.Run("Fill2", func(b *testing.B) {
		ids := make([]string, 2)
		b.ReportAllocs()
		for b.Loop() {
			g.Fill(ids)
		}
	})
	b.Run("FillAt2", func(b *testing.B) {
		// A stream ID and one event ID stamped with a time the caller
		// read anyway: what the processor does per command.
		ids := make([]string, 2)
		now := time.Now()
		b.ReportAllocs()
		for b.Loop() {
			g.FillAt(ids, now)
		}
	})
	b.Run("NewParallel", func(b *testing.B) {
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				_ = g.New()
			}
		})
	})
}
