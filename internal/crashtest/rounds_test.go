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

var _ = testing.Short
