package consumertest

import (
	"sync/atomic"
	"testing"
	"time"

	"github.com/factum-go/factum"
)

// RunLeased checks setups whose consumers hold their group's lease
// (event.Config.Leases) over a store shared by every Start: several
// consumers of one group started at once, and stopped one after another
// while they consume, handle each stream exactly once between them and
// never two at a time. Run the plain cases with Run as well.
func RunLeased(t *testing.T, newSetup func(t *testing.T) Setup) {
	t.Helper()
	t.Run("OneInstanceAtATime", func(t *testing.T) {
		t.Parallel()
		oneInstanceAtATime(t, newSetup(t))
	})
}

func oneInstanceAtATime(t *testing.T, s Setup) {
	l := newLog(t, s.Store)
	l.append(200, 20)
	var inFlight, overlaps atomic.Int32
	f := newFunction(func(*factum.EventStream) error {
		if inFlight.Add(1) > 1 {
			overlaps.Add(1)
		}
		time.Sleep(300 * time.Microsecond)
		inFlight.Add(-1)
		return nil
	})
	p := f.processor(t, "leased")
	stops := []func(){s.Start(p, nil, nil), s.Start(p, nil, nil), s.Start(p, nil, nil)}
	// Stop two of them while the log is consumed; the last finishes it.
	for _, stop := range stops[:2] {
		time.Sleep(15 * time.Millisecond)
		stop()
	}
	ids := l.ids()
	deadline := time.Now().Add(30 * time.Second)
	for !handledAll(f, ids) && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	stops[2]()
	f.check(t)
	if n := overlaps.Load(); n != 0 {
		t.Errorf("two consumers of one group handled streams at once %d times", n)
	}
	for _, id := range ids {
		if n := f.count(id); n != 1 {
			t.Errorf("stream %s delivered %d times, want exactly once", id, n)
		}
	}
}

func handledAll(f *function, ids []string) bool {
	for _, id := range ids {
		if f.count(id) == 0 {
			return false
		}
	}
	return true
}
