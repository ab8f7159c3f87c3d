package consumertest

import (
	"context"
	"testing"

	"github.com/factum-go/factum"
)

func exactlyOnce(t *testing.T, s Setup) {
	l := newLog(t, s.Store)
	f := newFunction(nil)
	sig := newSignals()
	l.append(60, 6)
	stop := s.Start(f.processor(t, "once"), newFailures(), sig.notify)
	waitFor(t, "every stream to be handled", allDelivered(f, l.ids()))
	stop()
	// A graceful restart resumes after the last stream handled.
	l.append(20, 6)
	stop = s.Start(f.processor(t, "once"), newFailures(), sig.notify)
	waitFor(t, "the streams appended meanwhile to be handled", allDelivered(f, l.ids()))
	stop()
	f.check(t)
	for _, id := range l.ids() {
		if n := f.count(id); n != 1 {
			t.Fatalf("stream %s delivered %d times, want exactly once", id, n)
		}
	}
	sig.mu.Lock()
	defer sig.mu.Unlock()
	if len(sig.got) != len(l.ids()) {
		t.Fatalf("signals for %d commands, want %d", len(sig.got), len(l.ids()))
	}
	for cmd, codes := range sig.got {
		if len(codes) != 1 || codes[0] != factum.CodeOk {
			t.Fatalf("command %s signalled %v, want one Ok", cmd, codes)
		}
	}
}

func atLeastOnce(t *testing.T, s Setup) {
	l := newLog(t, s.Store)
	failing := map[int]bool{3: true, 7: true, 11: true}
	var ids []string
	f := newFunction(func(st *factum.EventStream) error {
		for i, id := range ids {
			if id == st.ID && failing[i] {
				return factum.IllegalState("consumertest: refused")
			}
		}
		return nil
	})
	l.append(15, 3)
	ids = l.ids()
	rec := newFailures()
	sig := newSignals()
	stop := s.Start(f.processor(t, "failing"), rec, sig.notify)
	defer stop()
	waitFor(t, "every failure to be recorded and every stream handled", func() bool {
		for i, id := range ids {
			if f.count(id) == 0 || failing[i] && rec.count(id) == 0 {
				return false
			}
		}
		return true
	})
	stop()
	f.check(t)
	for i, id := range ids {
		switch {
		case failing[i] && rec.count(id) != 1:
			t.Fatalf("failing stream %d: %d failures recorded, want 1", i, rec.count(id))
		case !failing[i] && rec.count(id) != 0:
			t.Fatalf("stream %d failed nowhere but %d failures were recorded", i, rec.count(id))
		}
	}
	// The failure is signalled as one, not as Ok.
	streams, err := s.Store.ReadLog(context.Background(), factum.Position{}, 100)
	if err != nil {
		t.Fatal(err)
	}
	sig.mu.Lock()
	defer sig.mu.Unlock()
	for i := range streams {
		codes := sig.got[streams[i].CommandID]
		wantFail := false
		for j, id := range ids {
			if id == streams[i].ID {
				wantFail = failing[j]
			}
		}
		if len(codes) == 0 {
			t.Fatalf("stream %s: no signal", streams[i].ID)
		}
		if last := codes[len(codes)-1]; wantFail != (last != factum.CodeOk) {
			t.Fatalf("stream %s: signalled %v, failing=%v", streams[i].ID, codes, wantFail)
		}
	}
}

func unrecorded(t *testing.T, s Setup) {
	l := newLog(t, s.Store)
	var failID string
	f := newFunction(func(st *factum.EventStream) error {
		if st.ID == failID {
			return factum.IllegalState("consumertest: refused")
		}
		return nil
	})
	l.append(5, 1) // one aggregate: strictly one after another
	failID = l.ids()[2]
	rec := newFailures()
	rec.setDown(true)
	stop := s.Start(f.processor(t, "unrecorded"), rec, newSignals().notify)
	waitFor(t, "the failure to be offered to the recorder", func() bool { return rec.refusals() >= 2 })
	after := l.ids()[3:]
	for _, id := range after {
		if f.count(id) != 0 {
			stop()
			t.Fatalf("a stream after an unrecorded failure was handled: the consumer moved past it")
		}
	}
	// Stopped and restarted while the failure is still unrecorded: the
	// failed stream comes again.
	stop()
	before := f.count(failID)
	stop = s.Start(f.processor(t, "unrecorded"), rec, newSignals().notify)
	waitFor(t, "the failed stream to be delivered again after a restart", func() bool { return f.count(failID) > before })
	for _, id := range after {
		if f.count(id) != 0 {
			stop()
			t.Fatalf("after a restart a stream past the unrecorded failure was handled")
		}
	}
	rec.setDown(false)
	waitFor(t, "the failure to be recorded and the rest handled", func() bool {
		return rec.count(failID) >= 1 && allDelivered(f, after)()
	})
	stop()
	f.check(t)
}

func replay(t *testing.T, s Setup) {
	l := newLog(t, s.Store)
	first := newFunction(nil)
	l.append(20, 4)
	stop := s.Start(first.processor(t, "original"), newFailures(), newSignals().notify)
	waitFor(t, "the original group to handle the log", allDelivered(first, l.ids()))
	stop()
	// A new group (a rebuilt projection) replays the whole log.
	rebuilt := newFunction(nil)
	stop = s.Start(rebuilt.processor(t, "rebuilt"), newFailures(), newSignals().notify)
	waitFor(t, "the new group to replay the log", allDelivered(rebuilt, l.ids()))
	stop()
	// The original group, restarted, resumes from its checkpoint.
	again := newFunction(nil)
	l.append(4, 4)
	stop = s.Start(again.processor(t, "original"), newFailures(), newSignals().notify)
	ids := l.ids()
	// The log is read in order: had the group started over, the old
	// streams would come before the new ones.
	waitFor(t, "the original group to handle the new streams", allDelivered(again, ids[20:]))
	stop()
	for _, id := range ids[:20] {
		if again.count(id) != 0 {
			t.Fatalf("stream %s redelivered to the restarted group: it did not resume from its checkpoint", id)
		}
	}
	first.check(t)
	rebuilt.check(t)
	again.check(t)
}
