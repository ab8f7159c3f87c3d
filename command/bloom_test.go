package command

import (
	"hash/maphash"
	"strconv"
	"testing"
)

// The sizing reaches the rate it promises, by the Poisson model, and costs
// no more than 40 % over a classic filter at the default rate.
func TestBlockedParams(t *testing.T) {
	for _, fpr := range []float64{1e-2, 1e-3, 1e-5, 1e-7} {
		bpk, k := blockedParams(fpr)
		if got := blockedFPR(bpk, k); got > fpr {
			t.Errorf("rate %g: %g bits per key, k=%d give %g", fpr, bpk, k, got)
		}
		if bpk > 1 {
			if got := blockedFPR(bpk-0.5, k); got <= fpr {
				t.Errorf("rate %g: %g bits per key is not the smallest (%g already gives %g)", fpr, bpk, bpk-0.5, got)
			}
		}
	}
	if bpk, k := blockedParams(1e-5); bpk > 24*1.4 || k < 8 {
		t.Errorf("1e-5: %g bits per key, k=%d", bpk, k)
	}
}

// A full filter answers fresh keys wrongly at about the configured rate:
// 20,000 keys in a filter sized for them at 1e-3, then 200,000 fresh keys
// tested; the expectation is at most 200 false positives.
func TestBlockedBloomRate(t *testing.T) {
	const n, fresh, fpr = 20_000, 200_000, 1e-3
	bpk, k := blockedParams(fpr)
	f := newBlockedBloom(n, bpk, k)
	seed := maphash.MakeSeed()
	for i := range n {
		p := f.probe(maphash.String(seed, "in-"+strconv.Itoa(i)))
		f.testAndAdd(p)
	}
	for i := range n {
		if !f.test(f.probe(maphash.String(seed, "in-"+strconv.Itoa(i)))) {
			t.Fatalf("key %d added but not found", i)
		}
	}
	wrong := 0
	for i := range fresh {
		if f.test(f.probe(maphash.String(seed, "out-"+strconv.Itoa(i)))) {
			wrong++
		}
	}
	if limit := int(fresh * fpr * 1.5); wrong > limit {
		t.Fatalf("%d false positives among %d fresh keys, want at most %d", wrong, fresh, limit)
	}
	t.Logf("%d false positives among %d fresh keys (%g bits per key, k=%d)", wrong, fresh, bpk, k)
	f.clear()
	if f.test(f.probe(maphash.String(seed, "in-0"))) {
		t.Fatal("cleared filter still holds a key")
	}
}
