package rapidruns

import (
	"flag"
	"os"
	"strconv"
	"testing"

	_ "pgregory.net/rapid" // defines the -rapid.checks flag
)

// Limit sets rapid's number of runs to n for the rest of the test (and
// restores it at cleanup) unless -rapid.checks or RAPID_CHECKS is set.
// Tests calling it must not run in parallel with other rapid tests.
func Limit(t testing.TB, n int) {
	t.Helper()
	if _, ok := os.LookupEnv("RAPID_CHECKS"); ok {
		return
	}
	f := flag.Lookup("rapid.checks")
	if f == nil {
		return
	}
	explicit := false
	flag.Visit(func(v *flag.Flag) { explicit = explicit || v.Name == f.Name })
	if explicit {
		return
	}
	old := f.Value.String()
	if err := f.Value.Set(strconv.Itoa(n)); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = f.Value.Set(old) })
}
