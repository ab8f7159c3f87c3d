package aggregate

import (
	"testing"
	"time"
)

// SetArrivalGrace sets how long a group waits for the next command of its
// run until the test ends. A test asserting how a run forms its groups
// sets it long, so that a loaded machine's scheduling does not end a
// group early; no test in the package runs in parallel with another.
func SetArrivalGrace(t testing.TB, d time.Duration) {
	t.Helper()
	old := arrivalGrace
	arrivalGrace = d
	t.Cleanup(func() { arrivalGrace = old })
}
