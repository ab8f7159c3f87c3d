package crashtest_test

import (
	"os"
	"strconv"
	"testing"
)

// RoundsEnv sets the rounds of every fault test (default 3).
const RoundsEnv = "FACTUM_CRASH_ROUNDS"

func rounds() int {
	if n, err := strconv.Atoi(os.Getenv(RoundsEnv)); err == nil && n > 0 {
		return n
	}
	return 3
}

// skipShort skips the slow crash and fault tests under -short; CI runs
// them (it does not pass -short).
func skipShort(t *testing.T) {
	t.Helper()
	if testing.Short() {
		t.Skip("crash and fault tests run serve for a minute or more; not under -short")
	}
}
