package main

import (
	"bytes"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"time"
)

// logBufferLimit bounds the bytes a lineWriter holds for its sink besides
// the batch the sink is writing (some 2,000 access lines): past it, Write
// waits for the sink.
const logBufferLimit = 256 << 10

// logWriteInterval is the least time between two writes to the sink: a
// line after a quiet spell is written at once, the lines that follow it
// within this time together, so a busy service makes at most some 100
// write calls a second however many lines it logs.
const logWriteInterval = 10 * time.Millisecond

// lineWriter is serve's log output: Write copies the line into a buffer and
// returns, and one goroutine writes what has gathered to the sink, so a
// request never makes the write system call itself and many lines cost one
// call. The goroutine writes a line at once after a quiet spell, and the
// lines that follow within logWriteInterval together: a line reaches the
// sink within that interval plus one write of the sink, in the order of
// the Writes. Flush and Close do not wait for the interval.
//
// A sink slower than the lines fills the buffer; at logBufferLimit, Write
// waits until the sink has taken the buffer, so no line is lost and the
// memory stays bounded (the requests slow down to the sink's pace, as
// they would writing it themselves). A sink whose write fails loses that
// batch: the lines are counted (Lost), and Close reports them with the
// first error. Close writes every line accepted before it; Writes after
// Close go straight to the sink.
type lineWriter struct {
	sink io.Writer
	mu   sync.Mutex
	cond sync.Cond // signals a change of buf, taken, flushed or closed
	buf  []byte    // the lines not yet taken by the goroutine
	// spare is the buffer the goroutine last wrote, reused for the next
	// lines.
	spare []byte
	// queued and written count the bytes accepted and those the goroutine
	// is done with (written or lost), so Flush knows when its lines are out.
	queued, written int64
	closed          bool
	done            chan struct{}
	hurry           chan struct{} // cuts the interval short for Flush and Close
	firstErr        error
	lost            atomic.Int64
}

// newLineWriter returns a lineWriter for sink and starts its goroutine,
// which Close ends.
func newLineWriter(sink io.Writer) *lineWriter {
	w := &lineWriter{sink: sink, done: make(chan struct{}), hurry: make(chan struct{}, 1)}
	w.cond.L = &w.mu
	go w.run()
	return w
}

// Write queues a copy of p for the sink; it waits only while the buffer
// holds logBufferLimit bytes (and ends the goroutine's pause then). It never fails: a sink's error is counted
// in Lost.
func (w *lineWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for len(w.buf) > 0 && len(w.buf)+len(p) > logBufferLimit && !w.closed {
		w.hasten()
		w.cond.Wait()
	}
	if w.closed {
		// After the lines buffered before Close.
		w.mu.Unlock()
		<-w.done
		w.mu.Lock()
		return w.sink.Write(p)
	}
	w.buf = append(w.buf, p...)
	w.queued += int64(len(p))
	w.cond.Broadcast()
	return len(p), nil
}

// run writes the gathered lines to the sink until Close.
func (w *lineWriter) run() {
	defer close(w.done)
	pause := time.NewTimer(logWriteInterval)
	pause.Stop()
	w.mu.Lock()
	for {
		for len(w.buf) == 0 && !w.closed {
			w.cond.Wait()
		}
		if len(w.buf) == 0 {
			w.mu.Unlock()
			return
		}
		batch := w.buf
		w.buf, w.spare = w.spare[:0], nil
		// Writers waiting for room go on while the sink is written.
		w.cond.Broadcast()
		w.mu.Unlock()
		_, err := w.sink.Write(batch)
		w.mu.Lock()
		if err != nil {
			w.lost.Add(int64(bytes.Count(batch, []byte{'\n'})))
			if w.firstErr == nil {
				w.firstErr = err
			}
		}
		w.written += int64(len(batch))
		if cap(batch) <= 2*logBufferLimit {
			w.spare = batch[:0]
		}
		w.cond.Broadcast()
		if w.closed {
			continue
		}
		w.mu.Unlock()
		pause.Reset(logWriteInterval)
		select {
		case <-pause.C:
		case <-w.hurry:
			pause.Stop()
		}
		w.mu.Lock()
	}
}

// hasten ends the goroutine's pause between two writes, if it is in one.
func (w *lineWriter) hasten() {
	select {
	case w.hurry <- struct{}{}:
	default:
	}
}

// Flush waits until every line written before it has been written to the
// sink (or lost).
func (w *lineWriter) Flush() {
	w.hasten()
	w.mu.Lock()
	defer w.mu.Unlock()
	target := w.queued
	for w.written < target {
		w.cond.Wait()
	}
}

// Lost returns how many lines the sink's errors have lost.
func (w *lineWriter) Lost() int64 { return w.lost.Load() }

// Close writes the lines still buffered, ends the goroutine and reports
// the lines lost to the sink's errors, if any; it may be called again.
func (w *lineWriter) Close() error {
	w.mu.Lock()
	w.closed = true
	w.cond.Broadcast()
	w.mu.Unlock()
	w.hasten()
	<-w.done
	w.mu.Lock()
	defer w.mu.Unlock()
	if n := w.lost.Load(); n > 0 {
		return fmt.Errorf("log: %d lines lost: %w", n, w.firstErr)
	}
	return nil
}
