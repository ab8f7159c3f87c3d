package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"
)

// gateSink is a sink whose writes wait, while it is shut, until it opens;
// it records what it was given and may fail the writes.
type gateSink struct {
	mu      sync.Mutex
	b       strings.Builder
	gate    chan struct{} // nil: open
	fail    error
	entered chan struct{} // receives once per write that waits at the gate
	writes  int
}

func (s *gateSink) Write(p []byte) (int, error) {
	s.mu.Lock()
	gate, fail := s.gate, s.fail
	s.mu.Unlock()
	if gate != nil {
		if s.entered != nil {
			s.entered <- struct{}{}
		}
		<-gate
	}
	if fail != nil {
		return 0, fail
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.writes++
	return s.b.Write(p)
}

func (s *gateSink) Writes() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.writes
}

func (s *gateSink) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// Concurrent writers: at Close every line is in the sink, whole, and
// each writer's lines in the order it wrote them.
func TestLineWriterWritesEveryLineInOrderAtClose(t *testing.T) {
	const writers, lines = 8, 2000
	var sink gateSink
	w := newLineWriter(&sink)
	var wg sync.WaitGroup
	for g := range writers {
		wg.Go(func() {
			for i := range lines {
				if n, err := fmt.Fprintf(w, "writer=%d line=%d\n", g, i); err != nil || n == 0 {
					t.Errorf("write: %d, %v", n, err)
				}
			}
		})
	}
	wg.Wait()
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	next := make([]int, writers)
	got := strings.Split(strings.TrimSuffix(sink.String(), "\n"), "\n")
	for _, line := range got {
		var g, i int
		if _, err := fmt.Sscanf(line, "writer=%d line=%d", &g, &i); err != nil {
			t.Fatalf("line %q: %v", line, err)
		}
		if i != next[g] {
			t.Fatalf("writer %d: line %d after %d", g, i, next[g]-1)
		}
		next[g]++
	}
	if len(got) != writers*lines {
		t.Errorf("%d lines, want %d", len(got), writers*lines)
	}
}

// Flush returns once the lines written before it are in the sink; lines
// written after Close go straight to it.
func TestLineWriterFlushAndWritesAfterClose(t *testing.T) {
	var sink gateSink
	w := newLineWriter(&sink)
	fmt.Fprintln(w, "one")
	w.Flush()
	if got := sink.String(); got != "one\n" {
		t.Fatalf("after Flush: %q", got)
	}
	fmt.Fprintln(w, "two")
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	fmt.Fprintln(w, "three")
	if got := sink.String(); got != "one\ntwo\nthree\n" {
		t.Errorf("after Close: %q", got)
	}
	if err := w.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
}

// A line after a quiet spell is written at once; the lines that follow
// it within logWriteInterval go in one write after the interval.
func TestLineWriterWritesAtOnceThenGathersForTheInterval(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var sink gateSink
		w := newLineWriter(&sink)
		defer w.Close()
		fmt.Fprintln(w, "one")
		synctest.Wait()
		if got := sink.String(); got != "one\n" {
			t.Fatalf("after a quiet spell the line is not out at once: %q", got)
		}
		fmt.Fprintln(w, "two")
		fmt.Fprintln(w, "three")
		synctest.Wait()
		if n := sink.Writes(); n != 1 {
			t.Fatalf("%d writes within the interval, want 1", n)
		}
		time.Sleep(logWriteInterval)
		synctest.Wait()
		if got, n := sink.String(), sink.Writes(); got != "one\ntwo\nthree\n" || n != 2 {
			t.Errorf("after the interval: %q in %d writes, want the three lines in 2", got, n)
		}
		// A quiet spell again: the next line is out at once.
		time.Sleep(time.Second)
		fmt.Fprintln(w, "four")
		synctest.Wait()
		if got := sink.String(); !strings.HasSuffix(got, "four\n") {
			t.Errorf("after a second quiet spell: %q", got)
		}
	})
}

// A stalled sink: Writes return at once until the buffer holds
// logBufferLimit bytes, then the next waits, and none is lost once the
// sink goes on.
func TestLineWriterWaitsForAStalledSinkPastTheLimitAndLosesNothing(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		sink := &gateSink{gate: make(chan struct{}), entered: make(chan struct{}, 1)}
		w := newLineWriter(sink)
		line := strings.Repeat("x", 99) + "\n"
		fmt.Fprint(w, line)
		<-sink.entered // the goroutine holds the first line at the gate
		// The buffer fills to the limit without a Write waiting.
		n := 1
		for ; n < 1+logBufferLimit/len(line); n++ {
			fmt.Fprint(w, line)
		}
		var returned atomic.Bool
		go func() {
			fmt.Fprint(w, line)
			returned.Store(true)
		}()
		synctest.Wait()
		if returned.Load() {
			t.Fatal("a Write past the limit returned while the sink was stalled")
		}
		sink.mu.Lock()
		close(sink.gate)
		sink.gate = nil
		sink.mu.Unlock()
		synctest.Wait()
		if !returned.Load() {
			t.Fatal("the Write still waits after the sink went on")
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		if got, want := strings.Count(sink.String(), line), n+1; got != want {
			t.Errorf("%d lines in the sink, want %d", got, want)
		}
	})
}

// A sink that fails loses the batch it failed: the lines are counted,
// Close reports them with the sink's error, and the lines after it
// recovers are written.
func TestLineWriterCountsTheLinesAFailingSinkLoses(t *testing.T) {
	errSink := errors.New("disk full")
	sink := &gateSink{fail: errSink}
	w := newLineWriter(sink)
	fmt.Fprint(w, "a\nb\n")
	w.Flush()
	if got := w.Lost(); got != 2 {
		t.Fatalf("Lost = %d, want 2", got)
	}
	sink.mu.Lock()
	sink.fail = nil
	sink.mu.Unlock()
	fmt.Fprintln(w, "c")
	err := w.Close()
	if !errors.Is(err, errSink) || !strings.Contains(err.Error(), "2 lines lost") {
		t.Errorf("Close = %v, want the 2 lines lost to %v", err, errSink)
	}
	if got := sink.String(); got != "c\n" {
		t.Errorf("sink holds %q, want the line after the failure", got)
	}
}

// A shutdown step that panics still has the lines logged before it
// written: the log is closed on the way out. The bubble's clock stands
// still, so the line gathered within the interval is out only if Close
// wrote it.
func TestAPanickingShutdownWritesTheLinesLoggedBeforeIt(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var sink gateSink
		s := &server{logs: newLineWriter(&sink)} // no http server: its Shutdown panics
		defer s.logs.Close()
		fmt.Fprintln(s.logs, "one")
		synctest.Wait()
		fmt.Fprintln(s.logs, "two") // gathered for the interval
		func() {
			defer func() {
				if recover() == nil {
					t.Fatal("Shutdown did not panic")
				}
			}()
			_ = s.Shutdown(context.Background())
		}()
		if got := sink.String(); got != "one\ntwo\n" {
			t.Errorf("after the panic the sink holds %q, want both lines", got)
		}
	})
}
