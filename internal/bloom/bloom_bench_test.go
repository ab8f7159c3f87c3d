package bloom

import (
	"math/rand/v2"
	"testing"
)

// BenchmarkTestAndAdd adds fresh keys to a filter of the pre-check's size
// (a million keys at 1e-5, 3.7 MB: larger than the caches), so each check
// pays the one cache miss the blocking leaves.
func BenchmarkTestAndAdd(b *testing.B) {
	f := New(1_000_000, 1e-5)
	r := rand.New(rand.NewPCG(3, 4))
	keys := make([]uint64, 1<<20)
	for i := range keys {
		keys[i] = r.Uint64()
	}
	b.ResetTimer()
	for i := range b.N {
		if i&(1<<20-1) == 0 && i > 0 {
			f.Clear()
		}
		f.TestAndAdd(keys[i&(1<<20-1)])
	}
}
