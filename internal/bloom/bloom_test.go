package bloom

import (
	"math"
	"math/rand/v2"
	"testing"
)

func TestAddedKeysAreAlwaysFound(t *testing.T) {
	f := New(10_000, 1e-5)
	r := rand.New(rand.NewPCG(1, 2))
	keys := make([]uint64, 10_000)
	for i := range keys {
		keys[i] = r.Uint64()
		if f.TestAndAdd(keys[i]) && i < 100 {
			// A false positive among the first hundred keys of a filter
			// sized for ten thousand at 1e-5 is all but impossible.
			t.Fatalf("key %d reported as added before it was", i)
		}
	}
	for i, k := range keys {
		if !f.Test(k) || !f.TestAndAdd(k) {
			t.Fatalf("key %d was added but is not found", i)
		}
	}
	f.Clear()
	for i, k := range keys[:100] {
		if f.Test(k) {
			t.Fatalf("key %d is found after Clear", i)
		}
	}
}

// The measured false-positive rate, full to the sized capacity, stays
// within the target: the sizing uses the blocked filter's formula, so a
// filter sized by the classic one (too small) fails here.
func TestFalsePositiveRateMeetsTheSizing(t *testing.T) {
	cases := []struct {
		n      uint
		rate   float64
		probes int
	}{
		{100_000, 1e-2, 200_000},
		{100_000, 1e-3, 1_000_000},
		{200_000, 1e-5, 3_000_000},
	}
	for _, c := range cases {
		f := New(c.n, c.rate)
		r := rand.New(rand.NewPCG(uint64(c.n), 7))
		for range c.n {
			f.TestAndAdd(r.Uint64())
		}
		// Fresh keys from another stream: any hit is a false positive.
		q := rand.New(rand.NewPCG(99, uint64(c.n)))
		hits := 0
		for range c.probes {
			if f.Test(q.Uint64()) {
				hits++
			}
		}
		got := float64(hits) / float64(c.probes)
		expected := c.rate * float64(c.probes)
		// The count is binomial around at most rate·probes: allow four
		// standard deviations above the target, no more.
		limit := expected + 4*math.Sqrt(expected) + 1
		t.Logf("n=%d rate=%g: k=%d, %.1f bits per key, measured %.3g (%d of %d)",
			c.n, c.rate, f.K(), float64(f.Bits())/float64(c.n), got, hits, c.probes)
		if float64(hits) > limit {
			t.Errorf("n=%d rate=%g: %d false positives in %d probes, above %.0f", c.n, c.rate, hits, c.probes, limit)
		}
	}
}

// The rate formula agrees with the classic one where blocking matters
// least (few bits per key, large blocks relative to a key's bits) and is
// higher than it everywhere: blocks fill unevenly.
func TestRateIsAboveTheClassicFilters(t *testing.T) {
	for _, c := range []struct {
		perKey float64
		k      int
	}{{10, 7}, {20, 14}, {30, 20}} {
		classic := math.Pow(1-math.Exp(-float64(c.k)/c.perKey), float64(c.k))
		if got := Rate(c.perKey, c.k); got < classic {
			t.Errorf("Rate(%v, %d) = %g, below the classic %g", c.perKey, c.k, got, classic)
		}
	}
}

func TestNewClampsItsArguments(t *testing.T) {
	for _, c := range []struct {
		n    uint
		rate float64
	}{{0, 1e-5}, {1, 0}, {1, 2}, {1, -1}} {
		f := New(c.n, c.rate)
		if f.Bits() < blockBits || f.K() < 1 {
			t.Errorf("New(%d, %g): %d bits, k=%d", c.n, c.rate, f.Bits(), f.K())
		}
		f.TestAndAdd(42)
		if !f.Test(42) {
			t.Errorf("New(%d, %g) lost a key", c.n, c.rate)
		}
	}
}

// Hashes that share their top bits (a caller's shard choice) still spread
// over the whole filter: the rate holds for them too.
func TestHashesSharingTopBitsSpread(t *testing.T) {
	const n, probes = 50_000, 500_000
	f := New(n, 1e-3)
	r := rand.New(rand.NewPCG(5, 6))
	top := uint64(0xA) << 60
	for range n {
		f.TestAndAdd(top | r.Uint64()>>4)
	}
	hits := 0
	for range probes {
		if f.Test(top | r.Uint64()>>4) {
			hits++
		}
	}
	if limit := 1e-3*probes + 4*math.Sqrt(1e-3*probes) + 1; float64(hits) > limit {
		t.Errorf("%d false positives in %d probes, above %.0f", hits, probes, limit)
	}
}
