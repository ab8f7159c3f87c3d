package rapidruns_test

import (
	"testing"

	"github.com/factum-go/factum/internal/rapidruns"
)

// A database-backed model test runs 20 rapid runs unless the command line
// or RAPID_CHECKS asks for more. (Compiled, not run: it needs a test.)
func Example() {
	var t *testing.T // a test's t
	rapidruns.Limit(t, 20)
}
