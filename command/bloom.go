package command

import (
	"math"
	"math/bits"
)

// blockBits is the size of a block: one 64-byte cache line.
const blockBits = 512

// blockedBloom is a cache-blocked Bloom filter: all k bits of a key lie in
// one 512-bit block, so a test or an add touches one cache line instead of
// k lines scattered over megabytes. That is what makes the request check
// cheap: a 1,000,000-entry filter no longer fits any cache, and k = 17
// misses per command cost more than the rest of the check. Blocking raises
// the false-positive rate at equal size (keys crowd unevenly into blocks),
// so blockedParams sizes the filter for the target rate with that taken
// into account: about 25 % more bits than a classic filter at 1e-5.
//
// It is not safe for concurrent use; the checker guards each with a mutex.
type blockedBloom struct {
	words  []uint64 // blocks × 8 words
	blocks uint64
	k      int
}

func newBlockedBloom(capacity uint, bitsPerKey float64, k int) *blockedBloom {
	blocks := uint64(math.Ceil(float64(capacity) * bitsPerKey / blockBits))
	blocks = max(blocks, 1)
	return &blockedBloom{words: make([]uint64, blocks*blockBits/64), blocks: blocks, k: k}
}

// probe is a key's place in a filter: its block and the stream of bit
// positions inside it, derived from the key's 64-bit hash. Probes are
// computed once per check and used on both filters of a rotating pair,
// which have the same geometry.
type probe struct {
	block uint64
	seed  uint64
}

func (f *blockedBloom) probe(h uint64) probe {
	// Multiply-shift maps a mixed hash onto the blocks without a division.
	hi, _ := bits.Mul64(mix64(h), f.blocks)
	return probe{block: hi, seed: h}
}

// testAndAdd sets the key's bits and reports whether all were set before.
func (f *blockedBloom) testAndAdd(p probe) bool {
	block := f.words[p.block*8 : p.block*8+8 : p.block*8+8]
	seen := true
	x := p.seed
	var r uint64
	for i := range f.k {
		// Each 64-bit draw gives seven 9-bit positions.
		if i%7 == 0 {
			x += golden
			r = mix64(x)
		}
		pos := r & (blockBits - 1)
		r >>= 9
		w, m := &block[pos>>6], uint64(1)<<(pos&63)
		if *w&m == 0 {
			seen = false
			*w |= m
		}
	}
	return seen
}

// test reports whether all of the key's bits are set.
func (f *blockedBloom) test(p probe) bool {
	block := f.words[p.block*8 : p.block*8+8 : p.block*8+8]
	x := p.seed
	var r uint64
	for i := range f.k {
		if i%7 == 0 {
			x += golden
			r = mix64(x)
		}
		pos := r & (blockBits - 1)
		r >>= 9
		if block[pos>>6]&(uint64(1)<<(pos&63)) == 0 {
			return false
		}
	}
	return true
}

func (f *blockedBloom) clear() { clear(f.words) }

// golden is 2^64 divided by the golden ratio, splitmix64's increment.
const golden = 0x9e3779b97f4a7c15

// mix64 is splitmix64's finaliser: a bijective mix whose output bits each
// depend on every input bit.
func mix64(z uint64) uint64 {
	z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
	z = (z ^ z>>27) * 0x94d049bb133111eb
	return z ^ z>>31
}

// blockedParams returns the bits per key and the number of probes that
// keep a blocked filter at or under the false-positive rate fpr when it
// holds its capacity: the smallest size (in steps of half a bit per key)
// for which some k reaches the rate, and that k.
func blockedParams(fpr float64) (bitsPerKey float64, k int) {
	// A blocked filter never beats a classic one, so the search starts at
	// the classic size for the rate; and its best k is below the classic
	// optimum, bitsPerKey × ln 2.
	classic := -math.Log(fpr) / (math.Ln2 * math.Ln2)
	for bpk := math.Floor(classic*2) / 2; bpk < 256; bpk += 0.5 {
		best, bestK := math.Inf(1), 0
		for k := 1; k <= int(bpk*math.Ln2)+1 && k <= 64; k++ {
			if r := blockedFPR(bpk, k); r < best {
				best, bestK = r, k
			}
		}
		if best <= fpr {
			return max(bpk, 1), bestK
		}
	}
	return 256, 64
}

// blockedFPR is the false-positive rate of a blocked filter with
// bitsPerKey bits per key and k probes, when full: the number of keys in a
// block is Poisson distributed with mean 512 / bitsPerKey, and a block
// holding j keys answers a fresh key wrongly with the classic filter's
// probability for j keys in 512 bits.
func blockedFPR(bitsPerKey float64, k int) float64 {
	mean := blockBits / bitsPerKey
	p := math.Exp(-mean) // P(j = 0)
	total := 0.0
	empty := 1 - 1.0/blockBits
	// The Poisson tail beyond mean + 12 standard deviations is negligible.
	for j := 0; j < int(mean+12*math.Sqrt(mean))+20; j++ {
		if j > 0 {
			p *= mean / float64(j)
		}
		set := 1 - math.Pow(empty, float64(k*j))
		total += p * math.Pow(set, float64(k))
	}
	return total
}
