package preparetest_test

import (
	"testing"
	"time"

	"github.com/factum-go/factum/prepare"
	"github.com/factum-go/factum/prepare/preparetest"
)

// A backend proves the contract from one test; this is the memory
// backend's, on a clock the kit moves instead of sleeping.
func ExampleRun() {
	_ = func(t *testing.T) {
		preparetest.Run(t, func(t *testing.T) preparetest.Target {
			clock := preparetest.NewClock(time.Now())
			return preparetest.Target{Backend: prepare.NewMemory(prepare.MemoryConfig{Clock: clock.Now}), Clock: clock}
		})
	}
}
