package nats

import (
	"sync"
	"testing"
	"time"
)

// appendWindow keeps, of the appends a store was asked for since it was
// last taken, the first one's start and end and the last one's end.
type appendWindow struct {
	mu                   sync.Mutex
	firstStart, firstEnd time.Time
	last                 time.Time
}

// note records an append that ran from start to end.
func (w *appendWindow) note(start, end time.Time) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.firstStart.IsZero() || start.Before(w.firstStart) {
		w.firstStart, w.firstEnd = start, end
	}
	if end.After(w.last) {
		w.last = end
	}
}

// take returns the first append's end and the last one's, and starts a
// new window; zero times when no append was noted.
func (w *appendWindow) take() (firstEnd, last time.Time) {
	w.mu.Lock()
	defer w.mu.Unlock()
	firstEnd, last = w.firstEnd, w.last
	w.firstStart, w.firstEnd, w.last = time.Time{}, time.Time{}, time.Time{}
	return firstEnd, last
}

// anatomy splits the contended rounds of one fleet into three spans: from
// the round's start to the end of its first append (the first command
// finds the owner's lane idle and goes alone while the round's sends are
// still being admitted: the admission), from there to the end of the last
// append (the writer: the group appends of the rest, one after the other),
// and from there to the round's end (the tail: the last signals reaching
// their waiters).
type anatomy struct {
	admit, writer, tail time.Duration
	rounds              int
}

// add adds a round that ran from start to end, whose appends w noted.
func (a *anatomy) add(start, end time.Time, w *appendWindow) {
	firstEnd, last := w.take()
	if firstEnd.IsZero() {
		return
	}
	a.admit += firstEnd.Sub(start)
	a.writer += last.Sub(firstEnd)
	a.tail += end.Sub(last)
	a.rounds++
}

// report reports the mean spans of a round in milliseconds, named with
// prefix.
func (a *anatomy) report(b *testing.B, prefix string) {
	if a.rounds == 0 {
		return
	}
	ms := func(d time.Duration) float64 { return d.Seconds() * 1000 / float64(a.rounds) }
	b.ReportMetric(ms(a.admit), prefix+"admit-ms")
	b.ReportMetric(ms(a.writer), prefix+"writer-ms")
	b.ReportMetric(ms(a.tail), prefix+"tail-ms")
}
