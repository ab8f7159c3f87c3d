package nats

import (
	"bytes"
	"math"
	"runtime"
	"testing"
)

// allocated returns the bytes f allocates: the least of three runs, as
// the count is the whole process's and another goroutine may allocate
// meanwhile.
func allocated(f func()) uint64 {
	least := uint64(math.MaxUint64)
	for range 3 {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		f()
		runtime.ReadMemStats(&after)
		least = min(least, after.TotalAlloc-before.TotalAlloc)
	}
	return least
}

// A header's count is a hint: a count far beyond what a batch holds, on
// a large body that does not decode, never makes the decoder allocate
// more than the body's size for it.
func TestWireDecodeBoundsTheHint(t *testing.T) {
	// A megabyte of a field tag that never ends: refused at its first
	// byte.
	body := append([]byte{WireVersion}, bytes.Repeat([]byte{0xff}, 1<<20)...)
	for _, tc := range []struct {
		name   string
		decode func() error
	}{
		{"commands", func() error { _, err := decodeCommands(body, 1<<30); return err }},
		{"signals", func() error { _, err := decodeSignals(body, 1<<30); return err }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var err error
			n := allocated(func() { err = tc.decode() })
			if err == nil {
				t.Fatal("decoded")
			}
			if n > uint64(len(body)) {
				t.Errorf("%d bytes allocated for a body of %d refused at its first field", n, len(body))
			}
		})
	}
}
