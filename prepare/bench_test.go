package prepare_test

import (
	"fmt"
	"testing"

	"github.com/factum-go/factum/prepare"
	"github.com/factum-go/factum/prepare/preparetest"
)

func BenchmarkMemoryPrepareRollback(b *testing.B) {
	for _, g := range []int{1, 32} {
		b.Run(fmt.Sprintf("goroutines=%d", g), func(b *testing.B) {
			preparetest.BenchPrepareRollback(b, prepare.NewMemory(prepare.MemoryConfig{}), g)
		})
	}
}
