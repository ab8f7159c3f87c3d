package aggregate

import (
	"testing"
	"time"
)

// Each retry's delay doubles and is jittered: it lies between half and
// all of the doubled backoff, and two delays for the same retry differ (two
// instances that conflicted do not retry in step).
func TestRetryDelayIsExponentialWithJitter(t *testing.T) {
	base := time.Millisecond
	for n := range 4 {
		full := base << n
		seen := map[time.Duration]bool{}
		for range 200 {
			d := retryDelay(base, n)
			if d < full/2 || d > full {
				t.Fatalf("retry %d: delay %v outside [%v, %v]", n, d, full/2, full)
			}
			seen[d] = true
		}
		if len(seen) < 10 {
			t.Fatalf("retry %d: only %d distinct delays in 200: no jitter", n, len(seen))
		}
	}
}
