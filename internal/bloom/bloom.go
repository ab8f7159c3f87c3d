package bloom

import (
	"math"
	"math/bits"
)

// blockBits is the size of a block: one 64-byte cache line.
const blockBits = 512

// maxK bounds the bits set per key; past it a lower rate needs more bits
// per key rather than more probes.
const maxK = 24

// block is one cache line of the filter. Filters are slices of blocks, so
// a block starts on a 64-byte boundary whenever the slice does (Go's
// allocator aligns large allocations to pages).
type block [blockBits / 64]uint64

// Filter is a cache-blocked Bloom filter of 64-bit hashes. It answers
// "certainly not added" or "maybe added"; a key added is always found. The
// hashes must be distinct for distinct keys and well spread (a maphash or
// xxhash sum is); the filter mixes them again, so hashes that share some
// bits (keys a caller sharded by their top bits) still spread over every
// block. A Filter is not safe for concurrent use: callers lock around it.
type Filter struct {
	blocks []block
	k      int
}

// New returns a filter sized so that, holding n keys, it answers "maybe"
// for a key never added with probability at most rate. n is at least 1 and
// rate is clamped to [1e-12, 0.5].
func New(n uint, rate float64) *Filter {
	n = max(n, 1)
	rate = min(max(rate, 1e-12), 0.5)
	perKey, k := size(rate)
	nblocks := max(uint64(math.Ceil(float64(n)*perKey/blockBits)), 1)
	return &Filter{blocks: make([]block, nblocks), k: k}
}

// size returns the bits per key and the bits set per key that reach rate
// with the fewest bits, by the blocked filter's rate formula.
func size(rate float64) (perKey float64, k int) {
	// A classic filter needs -log2(rate)/ln 2 bits per key; a blocked one
	// needs somewhat more, so the search starts there.
	for perKey = math.Ceil(-math.Log2(rate) / math.Ln2); ; perKey += 0.5 {
		// The rate falls with k to a minimum and rises after it: stop at
		// the minimum.
		prev := 1.0
		for k = 1; k <= maxK; k++ {
			r := Rate(perKey, k)
			if r <= rate {
				return perKey, k
			}
			if r > prev {
				break
			}
			prev = r
		}
	}
}

// Rate is the false-positive rate of a blocked filter with perKey bits per
// key and k bits set per key, when it holds the keys it was sized for. The
// keys per block follow a Poisson distribution; a block holding x keys has
// a rate of (1 - (1 - 1/512)^(k·x))^k.
func Rate(perKey float64, k int) float64 {
	mean := blockBits / perKey // keys per block
	var sum float64
	p := math.Exp(-mean) // P(x = 0)
	hi := int(mean + 12*math.Sqrt(mean) + 12)
	for x := 0; x <= hi; x++ {
		if x > 0 {
			p *= mean / float64(x)
		}
		sum += p * math.Pow(1-math.Pow(1-1.0/blockBits, float64(k*x)), float64(k))
	}
	return sum
}

// K returns the number of bits the filter sets per key.
func (f *Filter) K() int { return f.k }

// Bits returns the filter's size in bits.
func (f *Filter) Bits() int { return len(f.blocks) * blockBits }

// TestAndAdd adds the key with hash h and reports whether it may have been
// added before (every one of its bits was already set).
func (f *Filter) TestAndAdd(h uint64) bool {
	h = mix(h)
	b := f.block(h)
	seen := true
	p := probe{h: h}
	for range f.k {
		word, m := p.next()
		if b[word]&m == 0 {
			seen = false
			b[word] |= m
		}
	}
	return seen
}

// Test reports whether the key with hash h may have been added.
func (f *Filter) Test(h uint64) bool {
	h = mix(h)
	b := f.block(h)
	p := probe{h: h}
	for range f.k {
		if word, m := p.next(); b[word]&m == 0 {
			return false
		}
	}
	return true
}

// Clear removes every key.
func (f *Filter) Clear() { clear(f.blocks) }

// block picks the key's block from the high bits of h (a multiply-shift,
// which maps h onto [0, len) without a division).
func (f *Filter) block(h uint64) *block {
	hi, _ := bits.Mul64(h, uint64(len(f.blocks)))
	return &f.blocks[hi]
}

// probe yields the positions of a key's bits in its block. They come from
// a splitmix64 sequence seeded with the key's mixed hash, nine bits a
// position, seven positions per 64-bit value: independent of the block
// choice, which takes the mixed hash's high bits as they are.
type probe struct {
	h, v uint64
	i    int
}

// next returns the word of the next bit and the bit's mask in that word.
func (p *probe) next() (word int, mask uint64) {
	if p.i%7 == 0 {
		p.h += 0x9e3779b97f4a7c15
		p.v = mix(p.h)
	}
	p.i++
	pos := p.v & (blockBits - 1)
	p.v >>= 9
	return int(pos >> 6), 1 << (pos & 63)
}

// mix is splitmix64's finaliser.
func mix(x uint64) uint64 {
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	return x ^ x>>31
}
