package bloom_test

import (
	"fmt"
	"hash/maphash"

	"github.com/factum-go/factum/internal/bloom"
)

func Example() {
	seed := maphash.MakeSeed()
	f := bloom.New(1000, 1e-5)
	f.TestAndAdd(maphash.String(seed, "req-1"))
	fmt.Println(f.Test(maphash.String(seed, "req-1")))
	fmt.Println(f.TestAndAdd(maphash.String(seed, "req-2")))
	// Output:
	// true
	// false
}
